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
  snippet: string;
}

export function ThreadSidebar({ threadId, threads }: { threadId: string; threads: ThreadSummary[] }) {
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
  const newChat = () => router.push(`/t/${crypto.randomUUID()}`);

  return (
    <aside className="sidebar">
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
              <Link href={`/t/${hit.threadId}`} data-testid="search-hit">
                <span className="hit-role">{hit.role}</span>{' '}
                <span dangerouslySetInnerHTML={{ __html: escapeSnippet(hit.snippet) }} />
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
          >
            {thread.title} <span className="count">{thread.messageCount}</span>
          </Link>
        ))}
      </nav>
    </aside>
  );
}

/** The snippet is plain text with <b>…</b> around matches (ts_headline): escape everything else. */
function escapeSnippet(snippet: string) {
  const escaped = snippet.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return escaped.replace(/&lt;b&gt;/g, '<mark>').replace(/&lt;\/b&gt;/g, '</mark>');
}
