'use client';

import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ChatMessage } from '../../lib/tools';
import { ContextInspector } from './context-inspector';
import { MessageView } from './message-view';
import { ThreadSidebar, type ThreadSummary } from './thread-sidebar';
import { useSettledAnswer } from './use-settled-answer';

interface ChatAppProps {
  threadId: string;
  initialMessages: ChatMessage[];
  /** Stored status per message id (a stopped answer is `cancelled`). */
  initialStatuses: Record<string, string>;
  initialCursor: number | null;
  threads: ThreadSummary[];
}

export function ChatApp({
  threadId,
  initialMessages,
  initialStatuses,
  initialCursor,
  threads: initialThreads,
}: ChatAppProps) {
  const [statuses, setStatuses] = useState(initialStatuses);
  const [threads, setThreads] = useState(initialThreads);
  const [cursor, setCursor] = useState(initialCursor);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [input, setInput] = useState('');
  const [reportsVersion, setReportsVersion] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  const keepOffset = useRef<number | null>(null);

  // The thread list without a reload: the first exchange creates the thread and titles it, and every exchange adds
  // to its count. The answer's last writes may land just after the stream ends: ask again until the list has them.
  const refreshThreads = useCallback(
    async (expectedCount: number) => {
      for (let attempt = 0; attempt < 15; attempt++) {
        const response = await fetch('/api/threads');
        if (!response.ok) return;
        const { threads: listed } = (await response.json()) as {
          threads: Array<{ id: string; title: string | null; messageCount: number }>;
        };
        setThreads(listed.map((thread) => ({ ...thread, title: thread.title ?? 'Untitled' })));
        const current = listed.find((thread) => thread.id === threadId);
        if (current && current.title !== null && current.messageCount >= expectedCount) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    [threadId],
  );
  const [panel, setPanel] = useState<'threads' | 'inspector' | null>(null);
  const title = threads.find((thread) => thread.id === threadId)?.title ?? 'New chat';
  useEffect(() => {
    document.title = `${title} · agent-history`;
  }, [title]);

  const transport = useMemo(
    () =>
      new DefaultChatTransport<ChatMessage>({
        api: '/api/chat',
        // Only the new message travels: the server reads the history from the store.
        prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
          body: {
            threadId: id,
            trigger,
            messageId,
            message: trigger === 'submit-message' ? messages.at(-1) : undefined,
          },
        }),
      }),
    [],
  );
  const { messages, setMessages, sendMessage, regenerate, stop, status, error, addToolApprovalResponse } =
    useChat<ChatMessage>({
      id: threadId,
      messages: initialMessages,
      transport,
      // On mount, GET /api/chat/<id>/stream: an answer still being written (by this server) is replayed and followed.
      resume: true,
      // Once every approval of the answer is answered, the answer is re-submitted and continued on the server.
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onFinish: ({ message, messages: shown, isAbort }) => {
        setStatuses((current) => ({ ...current, [message.id]: isAbort ? 'cancelled' : 'completed' }));
        void refreshThreads(shown.length).then(() => setReportsVersion((version) => version + 1));
      },
    });
  const busy = status === 'submitted' || status === 'streaming';
  useSettledAnswer({ threadId, initialMessages, initialStatuses, messages, status, setMessages, setStatuses });

  // Start at the newest message; keep the reading position when an older page is put on top.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    if (keepOffset.current !== null) {
      element.scrollTop = element.scrollHeight - keepOffset.current;
      keepOffset.current = null;
    } else if (
      element.scrollHeight - element.scrollTop - element.clientHeight < 160 ||
      messages.length <= initialMessages.length
    ) {
      element.scrollTop = element.scrollHeight;
    }
  }, [messages, initialMessages.length]);

  const loadOlder = useCallback(async () => {
    if (cursor === null || loadingOlder || !scroller.current) return;
    setLoadingOlder(true);
    try {
      const response = await fetch(`/api/threads/${threadId}/messages?before=${cursor}`);
      const page = (await response.json()) as {
        messages: ChatMessage[];
        entries: Array<{ id: string; status: string }>;
        nextCursor: number | null;
      };
      keepOffset.current = scroller.current.scrollHeight - scroller.current.scrollTop;
      setMessages((current) => [
        ...page.messages.filter((older) => !current.some((message) => message.id === older.id)),
        ...current,
      ]);
      setStatuses((current) => ({
        ...Object.fromEntries(page.entries.map((entry) => [entry.id, entry.status])),
        ...current,
      }));
      setCursor(page.nextCursor);
    } finally {
      setLoadingOlder(false);
    }
  }, [cursor, loadingOlder, setMessages, threadId]);

  useEffect(() => {
    // A short first page may not fill the window: then there is nothing to scroll, so load on.
    const element = scroller.current;
    if (element && cursor !== null && element.scrollHeight <= element.clientHeight) void loadOlder();
  }, [cursor, loadOlder, messages.length]);

  const stopAnswer = async () => {
    // useChat's stop() only closes the connection (the server would finish the answer); the stop endpoint
    // cancels it and keeps what was written.
    await fetch('/api/chat/stop', { method: 'POST', body: JSON.stringify({ threadId }) });
    await stop();
  };

  const lastAssistant = [...messages].reverse().find((message) => message.role === 'assistant');

  return (
    <div className={`app ${panel ? `show-${panel}` : ''}`}>
      <ThreadSidebar threadId={threadId} threads={threads} open={panel === 'threads'} onClose={() => setPanel(null)} />
      {panel && <div className="scrim" data-testid="scrim" onClick={() => setPanel(null)} />}
      <main className="chat" data-testid="chat">
        <header className="topbar">
          <button
            type="button"
            className="toggle"
            data-testid="toggle-threads"
            aria-expanded={panel === 'threads'}
            onClick={() => setPanel(panel === 'threads' ? null : 'threads')}
          >
            ☰ Chats
          </button>
          <h1 data-testid="thread-title">{title}</h1>
          <button
            type="button"
            className="toggle"
            data-testid="toggle-inspector"
            aria-expanded={panel === 'inspector'}
            onClick={() => setPanel(panel === 'inspector' ? null : 'inspector')}
          >
            Context
          </button>
        </header>
        <div
          className="messages"
          ref={scroller}
          data-testid="messages"
          onScroll={(event) => event.currentTarget.scrollTop < 40 && void loadOlder()}
        >
          {cursor !== null && (
            <button className="older" data-testid="load-older" onClick={() => void loadOlder()} disabled={loadingOlder}>
              {loadingOlder ? 'Loading…' : 'Load older messages'}
            </button>
          )}
          {cursor === null && messages.length > 0 && <div className="start">Start of the conversation</div>}
          {messages.length === 0 && (
            <div className="empty">
              Ask about the weather in a city, to be reminded of something (you approve it), for a long story (you can
              stop it), or to show some markdown.
            </div>
          )}
          {messages.map((message) => (
            <MessageView
              key={message.id}
              message={message}
              status={statuses[message.id]}
              streaming={busy && message.id === messages.at(-1)?.id && message.role === 'assistant'}
              respondToApproval={busy ? undefined : (response) => void addToolApprovalResponse(response)}
            />
          ))}
        </div>
        {error && (
          <div className="error" data-testid="chat-error">
            {error.message}
          </div>
        )}
        <form
          className="composer"
          onSubmit={(event) => {
            event.preventDefault();
            if (!input.trim() || busy) return;
            void sendMessage({ text: input.trim() });
            setInput('');
          }}
        >
          <input
            data-testid="composer"
            value={input}
            onChange={(event) => setInput(event.target.value)}
            placeholder="Message…"
            autoFocus
          />
          {busy ? (
            <button type="button" data-testid="stop" onClick={() => void stopAnswer()}>
              Stop
            </button>
          ) : (
            <button type="submit" data-testid="send" disabled={!input.trim()}>
              Send
            </button>
          )}
          <button
            type="button"
            data-testid="regenerate"
            disabled={busy || !lastAssistant}
            onClick={() => void regenerate({ messageId: lastAssistant?.id })}
          >
            Regenerate
          </button>
        </form>
      </main>
      <aside className={`inspector drawer ${panel === 'inspector' ? 'open' : ''}`} data-testid="inspector">
        <ContextInspector threadId={threadId} version={reportsVersion} />
      </aside>
    </div>
  );
}
