import { sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { rowsOf } from '../tenant/database.js';
import { searchVectorOf } from '../schema/tsvector.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertInteger, assertThreadId, assertOptionalUserId } from '../errors/assert-input.js';

/** The options of `searchMessages`. */
export interface SearchMessagesOptions {
  /** Only this thread. @default every thread of the tenant */
  threadId?: string;
  /** Only threads of this user. @default every user */
  userId?: string;
  /** The most hits returned. @default 20 (1 to 100) */
  limit?: number;
  /**
   * The search's statement timeout (`SET LOCAL statement_timeout`, this transaction only), in milliseconds: a
   * search that takes longer is cancelled with a retryable `DatabaseError` (`57014`). @default 5000 (1 to 600000)
   */
  timeoutMs?: number;
}

/** One message that matched a search. */
export interface SearchHit {
  /** The message's thread. */
  threadId: string;
  /** The message's sequence in its thread. */
  sequence: number;
  /** The `UIMessage.id`. */
  messageId: string;
  /** The message's role. */
  role: string;
  /** Postgres `ts_rank`: higher is a better match; hits come best first. */
  rank: number;
  /** HTML: the matching text, escaped, with the matched words wrapped in `<b>…</b>`. Safe to render as HTML. */
  snippet: string;
  /** When the message was appended. */
  createdAt: Date;
}

const MAX_QUERY_LENGTH = 1000;

// ts_headline marks the matches with these control characters (removed from the text first), so the user's
// text can be HTML-escaped before the markers become <b> tags: a snippet never carries the user's own markup.
const MARK_START = '\u0002'; // chr(2) in the query
const MARK_STOP = '\u0003'; // chr(3)
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function toHtmlSnippet(marked: string): string {
  return marked
    .replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!)
    .replaceAll(MARK_START, '<b>')
    .replaceAll(MARK_STOP, '</b>');
}

/**
 * Full-text search over the text parts of the tenant's messages (reasoning and tool traffic are not indexed),
 * with web-search syntax (`"exact phrase"`, `or`, `-word`). Any string is a valid query: operators that make
 * no sense are ignored, never an error. Ranked, with snippets; deleted threads and messages are left out.
 */
export function searchMessages(
  context: StoreContext,
  query: string,
  options: SearchMessagesOptions = {},
): Promise<SearchHit[]> {
  if (typeof query !== 'string' || query.trim().length === 0) {
    throw new InvalidArgumentError({ argument: 'query', value: query, message: 'expected a non-empty search string.' });
  }
  if (query.length > MAX_QUERY_LENGTH || query.includes('\u0000') || !query.isWellFormed()) {
    throw new InvalidArgumentError({
      argument: 'query',
      value: query,
      message: `expected at most ${MAX_QUERY_LENGTH} characters, without NUL or lone surrogates.`,
    });
  }
  const limit = assertInteger('options.limit', options.limit ?? 20, 1, 100);
  const threadId = options.threadId === undefined ? null : assertThreadId(options.threadId);
  const userId = assertOptionalUserId('options.userId', options.userId);
  const timeoutMs = assertInteger('options.timeoutMs', options.timeoutMs ?? 5_000, 1, 600_000);
  const { agentMessage, agentThread } = context.tables;
  // A row stored without a vector (`search: 'deferred'` or false) is matched by the same vector computed now.
  const vector = searchVectorOf(sql`m.parts`);
  return inTenant(context, async (tx) => {
    // A query of many terms over a large tenant can take long: bounded, so that it cannot hold a connection.
    await tx.execute(sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`);
    const rows = rowsOf<{
      thread_id: string;
      sequence: string;
      message_id: string;
      role: string;
      rank: number;
      snippet: string;
      created_at: string | Date;
    }>(
      await tx.execute(sql`
        with q as (select websearch_to_tsquery('simple', ${query}) as query)
        select m.thread_id, m.sequence, m.message_id, m.role, ts_rank(coalesce(m.search_vector, ${vector}), q.query) as rank,
          ts_headline('simple',
            translate((select string_agg(value #>> '{}', ' ') from jsonb_array_elements(jsonb_path_query_array(m.parts::jsonb, 'strict $[*] ? (@.type == "text").text'))), chr(2) || chr(3), ''),
            q.query, 'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxFragments=2, MaxWords=20, MinWords=5') as snippet,
          m.created_at
        from ${agentMessage} m
        join ${agentThread} t on t.tenant_id = m.tenant_id and t.id = m.thread_id
        cross join q
        where m.tenant_id = ${context.tenantId}
          and (m.search_vector @@ q.query or (m.search_vector is null and ${vector} @@ q.query))
          and m.deleted_at is null and t.deleted_at is null
          and (${threadId}::uuid is null or m.thread_id = ${threadId}::uuid)
          and (${userId}::text is null or t.user_id = ${userId}::text)
        order by rank desc, m.created_at desc, m.thread_id, m.sequence desc
        limit ${limit}`),
    );
    return rows.map((row) => ({
      threadId: row.thread_id,
      sequence: Number(row.sequence),
      messageId: row.message_id,
      role: row.role,
      rank: Number(row.rank),
      snippet: toHtmlSnippet(row.snippet ?? ''),
      createdAt: new Date(row.created_at),
    }));
  });
}
