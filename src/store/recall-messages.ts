import { sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { assertInteger, assertThreadId } from '../errors/assert-input.js';
import type { ContextRecalledItem } from '../model/context-store.js';
import type { MemoryEmbedder } from '../model/memory-embedder.js';
import { searchVectorOf } from '../schema/tsvector.js';
import { rowsOf } from '../tenant/database.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import {
  assertEmbedder,
  cosineSimilarity,
  embedTexts,
  messageTextOf,
  realArrayLiteral,
  recallableMessage,
  seenInThread,
} from './memory-sql.js';
import { requireThread } from './require-thread.js';
import { inTenant, type StoreContext } from './store-context.js';

/** The options of `recallMessages`. */
export interface RecallMessagesOptions {
  /** What to recall for, typically the newest user input. Only its first 2,000 characters are used. */
  query: string;
  /** The thread asking: recall searches the other threads of its user, and leaves out what this one holds. */
  threadId: string;
  /** The most messages returned. @default 5 (1 to 50) */
  limit?: number;
  /**
   * Also rank by cosine similarity to the query's embedding, over the recall entries `embedPendingMemory` wrote with
   * the same model, fused with the full-text ranking (reciprocal rank fusion, k = 60).
   * @default none: full-text only
   */
  embedder?: MemoryEmbedder;
}

/** The reciprocal-rank-fusion constant: a hit ranked r-th (from 1) in a list scores 1 / (60 + r). */
const RRF_K = 60;
const MAX_QUERY_CHARACTERS = 2_000;

interface Candidate {
  id: string;
  entry_id?: string;
  thread_id: string;
  sequence: string | number;
  content_version: number;
  role: 'user' | 'assistant';
  lineage: string;
  text: string;
}

/**
 * The messages of the same user's other threads most relevant to `query`, best first: full-text over the search
 * vector (any of the query's words), and with an `embedder` also cosine similarity over the stored embeddings of
 * messages whose text has not changed since, fused by reciprocal rank. A thread with no user recalls nothing; a
 * fork's copy and its original count once, and neither when the asking thread holds one of them.
 */
export async function recallMessages(
  context: StoreContext,
  options: RecallMessagesOptions,
): Promise<ContextRecalledItem[]> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError({ argument: 'options', value: options, message: 'expected { query, threadId }.' });
  const thread = assertThreadId(options.threadId);
  const query = recallQuery(options.query);
  const limit = assertInteger('options.limit', options.limit ?? 5, 1, 50);
  const embedder = options.embedder === undefined ? undefined : assertEmbedder('options.embedder', options.embedder);
  if (query.length === 0) {
    await inTenant(context, (tx) => requireThread(context, tx, thread));
    return [];
  }
  // The query is embedded before the transaction: no connection waits on the embedding model.
  const vector = embedder ? (await embedTexts(embedder, [query]))[0]! : undefined;
  const candidates = limit * 4;
  return inTenant(context, async (tx) => {
    const { userId } = await requireThread(context, tx, thread);
    if (userId === null) return [];
    const fullText = await fullTextCandidates(context, tx, { thread, userId, query, candidates });
    const byVector =
      embedder && vector
        ? await vectorCandidates(context, tx, { thread, userId, modelId: embedder.modelId, vector, candidates })
        : [];
    return fuse(fullText, byVector, limit);
  });
}

/** The query as used: a string, cut to its first 2,000 characters (whole code points), trimmed. */
function recallQuery(query: unknown): string {
  if (typeof query !== 'string' || query.includes('\u0000'))
    throw new InvalidArgumentError({
      argument: 'options.query',
      value: query,
      message: 'expected a string without NUL.',
    });
  return Array.from(query.slice(0, MAX_QUERY_CHARACTERS + 1))
    .join('')
    .slice(0, MAX_QUERY_CHARACTERS)
    .toWellFormed()
    .trim();
}

interface Scope {
  thread: string;
  userId: string;
  candidates: number;
}

async function fullTextCandidates(
  context: StoreContext,
  tx: TenantTransaction,
  { thread, userId, query, candidates }: Scope & { query: string },
): Promise<Candidate[]> {
  const { agentMessage, agentThread } = context.tables;
  const tenant = context.tenantId;
  // Any of the query's words (plainto_tsquery's AND made an OR): recall ranks, it does not filter on every word.
  return rowsOf<Candidate>(
    await tx.execute(sql`
      with ${seenInThread(context, thread)},
        q as (select replace(plainto_tsquery('simple', ${query})::text, ' & ', ' | ')::tsquery as query)
      select ${agentMessage.id} as id, ${agentMessage.threadId} as thread_id, ${agentMessage.sequence} as sequence,
        ${agentMessage.contentVersion} as content_version, ${agentMessage.role} as role,
        coalesce(${agentMessage.sourceMessageId}, ${agentMessage.id}) as lineage, ${messageTextOf(context)} as text
      from ${agentMessage}
      join ${agentThread} on ${agentThread.tenantId} = ${tenant} and ${agentThread.id} = ${agentMessage.threadId}
      cross join q
      where ${agentMessage.tenantId} = ${tenant} and ${agentThread.userId} = ${userId}
        and ${agentMessage.threadId} <> ${thread} and ${recallableMessage(context)}
        and (${agentMessage.searchVector} @@ q.query
          or (${agentMessage.searchVector} is null and ${searchVectorOf(agentMessage.parts)} @@ q.query))
        and coalesce(${agentMessage.sourceMessageId}, ${agentMessage.id}) not in (select lineage from seen)
      order by ts_rank(coalesce(${agentMessage.searchVector}, ${searchVectorOf(agentMessage.parts)}), q.query) desc,
        ${agentMessage.createdAt} desc, ${agentMessage.id}
      limit ${candidates}`),
  );
}

async function vectorCandidates(
  context: StoreContext,
  tx: TenantTransaction,
  { thread, userId, modelId, vector, candidates }: Scope & { modelId: string; vector: number[] },
): Promise<Candidate[]> {
  const { agentMessage, agentThread, agentMemory } = context.tables;
  const tenant = context.tenantId;
  // Only entries made from the message's current text: a stale embedding never ranks a changed (or redacted) message.
  // Ranked first, the text extracted after: only for the candidates, not for every entry compared.
  return rowsOf<Candidate>(
    await tx.execute(sql`
      with ${seenInThread(context, thread)},
        ranked as (select ${agentMessage.id} as id, ${agentMemory.id} as entry_id,
            ${cosineSimilarity(context, realArrayLiteral(vector))} as similarity
          from ${agentMemory}
          join ${agentMessage} on ${agentMessage.tenantId} = ${tenant} and ${agentMessage.id} = ${agentMemory.sourceMessageId}
            and ${agentMessage.contentVersion} = ${agentMemory.sourceContentVersion}
          join ${agentThread} on ${agentThread.tenantId} = ${tenant} and ${agentThread.id} = ${agentMemory.threadId}
          where ${agentMemory.tenantId} = ${tenant} and ${agentMemory.kind} = 'recall' and ${agentMemory.userId} = ${userId}
            and ${agentMemory.threadId} <> ${thread} and ${agentMemory.embeddingModel} = ${modelId}
            and cardinality(${agentMemory.embedding}) = ${vector.length} and ${recallableMessage(context)}
            and coalesce(${agentMessage.sourceMessageId}, ${agentMessage.id}) not in (select lineage from seen)
          order by similarity desc nulls last, ${agentMemory.id}
          limit ${candidates})
      select ranked.id, ranked.entry_id, ${agentMessage.threadId} as thread_id, ${agentMessage.sequence} as sequence,
        ${agentMessage.contentVersion} as content_version, ${agentMessage.role} as role,
        coalesce(${agentMessage.sourceMessageId}, ${agentMessage.id}) as lineage, ${messageTextOf(context)} as text
      from ranked
      join ${agentMessage} on ${agentMessage.tenantId} = ${tenant} and ${agentMessage.id} = ranked.id
      order by ranked.similarity desc nulls last, ranked.entry_id`),
  );
}

/** Reciprocal rank fusion of the two rankings, one hit per lineage, best first. */
function fuse(fullText: Candidate[], byVector: Candidate[], limit: number): ContextRecalledItem[] {
  const hits = new Map<
    string,
    { candidate: Candidate; entryId?: string; score: number; fullText: boolean; vector: boolean }
  >();
  const add = (list: Candidate[], kind: 'fullText' | 'vector') => {
    const seen = new Set<string>();
    let rank = 0;
    for (const candidate of list) {
      if (seen.has(candidate.lineage)) continue;
      seen.add(candidate.lineage);
      rank += 1;
      const hit = hits.get(candidate.lineage) ?? { candidate, score: 0, fullText: false, vector: false };
      hit.score += 1 / (RRF_K + rank);
      hit[kind] = true;
      if (candidate.entry_id) hit.entryId ??= candidate.entry_id;
      hits.set(candidate.lineage, hit);
    }
  };
  add(fullText, 'fullText');
  add(byVector, 'vector');
  return [...hits.values()]
    .sort((a, b) => b.score - a.score || a.candidate.id.localeCompare(b.candidate.id))
    .slice(0, limit)
    .map(({ candidate, entryId, score, fullText: byText, vector }) => ({
      id: entryId ?? `message:${candidate.id}`,
      sourceThreadId: candidate.thread_id,
      sourceMessageId: candidate.id,
      sourceSequence: Number(candidate.sequence),
      sourceContentVersion: Number(candidate.content_version),
      role: candidate.role,
      text: candidate.text,
      score,
      via: byText && vector ? 'both' : vector ? 'vector' : 'full-text',
    }));
}
