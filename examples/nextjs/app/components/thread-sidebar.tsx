'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';

export interface ThreadSummary {
  id: string;
  title: string;
  messageCount: number;
}

interface SearchHit {
  threadId: string;
  messageId: string;
  role: string;
  /** The store's snippet: HTML-escaped text with the matches in `<b>…</b>`. */
  snippet: string;
  /** The hit's turn in its thread: the search answers one hit per turn (app/api/search/route.ts). */
  turn: number;
}

interface ThreadSidebarProps {
  threadId: string;
  threads: ThreadSummary[];
  /** Shown as a drawer (narrow screens). */
  open: boolean;
  onClose: () => void;
}

export function ThreadSidebar({ threadId, threads, open, onClose }: ThreadSidebarProps) {
  const router = useRouter();
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<SearchHit[] | null>(null);

  useEffect(() => {
    if (!query.trim()) {
      setHits(null);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const response = await fetch(`/api/search?q=${encodeURIComponent(query)}`, { signal: controller.signal });
        setHits(((await response.json()) as { hits: SearchHit[] }).hits ?? []);
      } catch {
        // a newer query replaced this one
      }
    }, 250);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [query]);

  // Like the chatbot template: the browser makes the chat's uuid, the first message creates the thread.
  const newChat = () => {
    onClose();
    router.push(`/t/${crypto.randomUUID()}`);
  };

  return (
    <aside className={`sidebar drawer ${open ? 'open' : ''}`} data-testid="sidebar">
      <button className="new" data-testid="new-chat" onClick={newChat}>
        + New chat
      </button>
      <input
        className="search"
        data-testid="search"
        type="search"
        placeholder="Search all chats…"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
      />
      {hits !== null && (
        <ul className="hits" data-testid="search-results">
          {hits.length === 0 && <li className="none">No match</li>}
          {hits.map((hit) => (
            <li key={`${hit.threadId}-${hit.messageId}`}>
              <Link href={`/t/${hit.threadId}`} data-testid="search-hit" onClick={onClose}>
                <span className="hit-role">
                  turn {hit.turn} · {hit.role}
                </span>{' '}
                <Snippet html={hit.snippet} />
              </Link>
            </li>
          ))}
        </ul>
      )}
      <nav className="threads" data-testid="threads">
        {threads.map((thread) => (
          <Link
            key={thread.id}
            href={`/t/${thread.id}`}
            className={thread.id === threadId ? 'active' : ''}
            data-testid="thread-link"
            data-thread-id={thread.id}
            onClick={onClose}
          >
            <span className="thread-title">{thread.title}</span>{' '}
            <span className="count" data-testid="thread-count" title="messages">
              {thread.messageCount}
            </span>
          </Link>
        ))}
      </nav>
    </aside>
  );
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * The store's snippet (escaped text, matches in `<b>…</b>`) as React elements: the text is unescaped and handed to
 * React as text (escaped once, by React), the `<b>` markers become `<mark>`. No HTML is injected.
 */
function Snippet({ html }: { html: string }) {
  const pieces = html.split(/<\/?b>/);
  return (
    <span>
      {pieces.map((piece, index) => {
        const text = piece.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] ?? entity);
        return index % 2 === 1 ? <mark key={index}>{text}</mark> : text;
      })}
    </span>
  );
}
