import { and, eq, inArray, sql } from 'drizzle-orm';
import { assertInteger } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { MemoryEmbedder } from '../model/memory-embedder.js';
import { rowsOf } from '../tenant/database.js';
import { assertEmbedder, embedTexts, messageTextOf, recallableMessage } from './memory-sql.js';
import { inTenant, type StoreContext } from './store-context.js';

/** The options of `embedPendingMemory`. */
export interface EmbedPendingMemoryOptions {
  /** Makes the embeddings: `createMemoryEmbedder({ model })` from `agent-history/ai-sdk`, or the application's own. */
  embedder: MemoryEmbedder;
  /** Messages per call of the embedder and per transaction. @default 100 (1 to 2048) */
  batchSize?: number;
  /** Stop after this many messages (the rest stays pending for the next call). @default no limit (up to 10,000,000) */
  maxMessages?: number;
}

/** What `embedPendingMemory` did. */
export interface EmbedPendingMemoryResult {
  /** Recall entries written or brought up to date. */
  embedded: number;
  /** Messages that changed (or were redacted, excluded, deleted) between the read and the write: left for a later run. */
  skipped: number;
  /** Whether pending messages may remain (`maxMessages` was reached). */
  pending: boolean;
}

/** The most characters of a message's text that are embedded. */
const MAX_EMBEDDED_CHARACTERS = 8_000;

interface PendingMessage {
  id: string;
  thread_id: string;
  user_id: string;
  content_version: number;
  text: string;
}

/**
 * Writes the recall entries of the tenant's messages (the user's, on a store scoped to one) that have none for their
 * current text and the embedder's model: completed user and assistant text in threads that have a user. Off the
 * append path: call it from a job, as often as suits. In batches, each embedded outside any transaction and written
 * in a short one that locks its messages and writes only those whose text is still the one embedded, so a
 * redaction or an edit racing it wins; resumable, idempotent, safe beside writers.
 */
export async function embedPendingMemory(
  context: StoreContext,
  options: EmbedPendingMemoryOptions,
): Promise<EmbedPendingMemoryResult> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError({ argument: 'options', value: options, message: 'expected { embedder }.' });
  const embedder = assertEmbedder('options.embedder', options.embedder);
  const batchSize = assertInteger('options.batchSize', options.batchSize ?? 100, 1, 2048);
  const maxMessages = assertInteger('options.maxMessages', options.maxMessages ?? 10_000_000, 1, 10_000_000);
  const result: EmbedPendingMemoryResult = { embedded: 0, skipped: 0, pending: false };
  let after: string | null = null;
  for (let done = 0; ;) {
    const batch = await pendingBatch(context, embedder.modelId, after, Math.min(batchSize, maxMessages - done));
    if (batch.length === 0) return result;
    const vectors = await embedTexts(
      embedder,
      batch.map((message) => message.text),
    );
    const written = await writeRecallEntries(context, embedder.modelId, batch, vectors);
    result.embedded += written;
    result.skipped += batch.length - written;
    done += batch.length;
    after = batch.at(-1)!.id;
    if (done >= maxMessages) return { ...result, pending: true };
  }
}

async function pendingBatch(
  context: StoreContext,
  modelId: string,
  after: string | null,
  limit: number,
): Promise<PendingMessage[]> {
  const { agentMessage, agentThread, agentMemory } = context.tables;
  const tenant = context.tenantId;
  return inTenant(context, async (tx) =>
    rowsOf<PendingMessage>(
      await tx.execute(sql`
        select ${agentMessage.id} as id, ${agentMessage.threadId} as thread_id, ${agentMessage.userId} as user_id,
          ${agentMessage.contentVersion} as content_version,
          left(${messageTextOf(context)}, ${MAX_EMBEDDED_CHARACTERS}) as text
        from ${agentMessage}
        join ${agentThread} on ${agentThread.tenantId} = ${tenant} and ${agentThread.id} = ${agentMessage.threadId}
        left join ${agentMemory} on ${agentMemory.tenantId} = ${tenant} and ${agentMemory.kind} = 'recall'
          and ${agentMemory.sourceMessageId} = ${agentMessage.id}
        where ${agentMessage.tenantId} = ${tenant} and ${agentMessage.userId} is not null and ${recallableMessage(context)}
          and (${agentMemory.id} is null or ${agentMemory.sourceContentVersion} <> ${agentMessage.contentVersion}
            or ${agentMemory.embeddingModel} is distinct from ${modelId})
          and (${after}::uuid is null or ${agentMessage.id} > ${after}::uuid)
          and btrim(${messageTextOf(context)}) <> ''
        order by ${agentMessage.id}
        limit ${limit}`),
    ),
  );
}

/** Writes the batch's entries whose message still has the text that was embedded; returns how many. */
async function writeRecallEntries(
  context: StoreContext,
  modelId: string,
  batch: PendingMessage[],
  vectors: number[][],
): Promise<number> {
  const { agentMessage, agentMemory } = context.tables;
  return inTenant(context, async (tx) => {
    // FOR SHARE: a redaction (FOR UPDATE) waits for this write and then deletes what it wrote, or has committed
    // already and the version read here is the new one.
    const current = await tx
      .select({ id: agentMessage.id, contentVersion: agentMessage.contentVersion })
      .from(agentMessage)
      .where(
        and(
          eq(agentMessage.tenantId, context.tenantId),
          inArray(
            agentMessage.id,
            batch.map((message) => message.id),
          ),
          eq(agentMessage.contextState, 'eligible'),
          sql`${agentMessage.deletedAt} is null`,
        ),
      )
      .for('share');
    const versions = new Map(current.map((row) => [row.id, row.contentVersion]));
    const rows = batch.flatMap((message, index) =>
      versions.get(message.id) === Number(message.content_version)
        ? [
            {
              tenantId: context.tenantId,
              userId: message.user_id,
              scope: 'thread' as const,
              kind: 'recall' as const,
              threadId: message.thread_id,
              content: message.text,
              sourceThreadId: message.thread_id,
              sourceMessageId: message.id,
              sourceContentVersion: Number(message.content_version),
              embedding: vectors[index]!.map(Math.fround),
              embeddingModel: modelId,
            },
          ]
        : [],
    );
    if (rows.length === 0) return 0;
    await tx
      .insert(agentMemory)
      .values(rows)
      .onConflictDoUpdate({
        target: [agentMemory.tenantId, agentMemory.sourceMessageId],
        targetWhere: sql.raw(`kind = 'recall'`),
        set: {
          content: sql.raw('excluded.content'),
          embedding: sql.raw('excluded.embedding'),
          embeddingModel: sql.raw('excluded.embedding_model'),
          sourceContentVersion: sql.raw('excluded.source_content_version'),
          version: sql`${agentMemory.version} + 1`,
          // The inserted row's default, evaluated once for the statement: Citus refuses a function in DO UPDATE SET.
          updatedAt: sql.raw('excluded.updated_at'),
        },
      });
    return rows.length;
  });
}
