'use client';

import { useEffect, useRef } from 'react';
import type { ChatMessage } from '../../lib/tools';

interface SettledAnswerOptions {
  threadId: string;
  /** The messages the page was rendered with. */
  initialMessages: ChatMessage[];
  /** Their stored statuses when the page was rendered. */
  initialStatuses: Record<string, string>;
  /** useChat's current messages and status. */
  messages: ChatMessage[];
  status: string;
  setMessages: (update: (current: ChatMessage[]) => ChatMessage[]) => void;
  setStatuses: (update: (current: Record<string, string>) => Record<string, string>) => void;
}

/**
 * The page may be rendered while an answer is being written and the answer may end before useChat's resume request
 * reaches the server, which then answers 204 (nothing is streaming): useChat keeps the partial copy the page had.
 * A moment after mount, if that copy is still shown and nothing streams, it is replaced by the stored answer.
 */
export function useSettledAnswer({
  threadId,
  initialMessages,
  initialStatuses,
  messages,
  status,
  setMessages,
  setStatuses,
}: SettledAnswerOptions): void {
  const latest = useRef({ messages, status });
  latest.current = { messages, status };
  useEffect(() => {
    const last = initialMessages.at(-1);
    const unfinished = last?.role === 'assistant' && ['pending', 'streaming'].includes(initialStatuses[last.id] ?? '');
    if (!last || !unfinished) return;
    const timer = setTimeout(async () => {
      if (latest.current.status !== 'ready' || latest.current.messages.at(-1) !== last) return;
      const response = await fetch(`/api/threads/${threadId}/messages`);
      if (!response.ok) return;
      const page = (await response.json()) as {
        messages: ChatMessage[];
        entries: Array<{ id: string; status: string }>;
      };
      const stored = page.messages.find((message) => message.id === last.id);
      const entry = page.entries.find((candidate) => candidate.id === last.id);
      if (!stored || !entry || latest.current.messages.at(-1) !== last) return;
      setMessages((current) => current.map((message) => (message.id === stored.id ? stored : message)));
      setStatuses((current) => ({ ...current, [stored.id]: entry.status }));
    }, 1500);
    return () => clearTimeout(timer);
    // Once, for the page as it was rendered.
  }, []);
}
