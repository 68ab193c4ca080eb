import { and, inArray, isNull } from 'drizzle-orm';
import type { ContextMessageCache, ContextWorkingMemory } from '../model/context-store.js';
import { loadContext } from './load-context.js';
import { writeSnapshot } from './write-snapshot.js';
import { writeSummary } from './write-summary.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { searchMessages } from './search-messages.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertThreadId } from '../errors/assert-input.js';
import { ofThread } from './of-thread.js';
import type { ContextStoreOptions, ThreadContextStore } from './context-artifact-operations.js';
import { getWorkingMemory, updateWorkingMemory, workingMemoryTarget, type WorkingMemory } from './working-memory.js';
import { recallMessages } from './recall-messages.js';
import { assertEmbedder } from './memory-sql.js';

/**
 * The context engine's persistence ({@link ContextStore}) for one thread of one tenant, on the Postgres store:
 * a consistent load (snapshot, newest valid summary, tail after the inclusive boundary, pinned messages),
 * summary and snapshot writes with optimistic versioning, full-text memory search within the thread, and memory
 * across threads (`loadMemory`: the working-memory document and recall of the user's other threads).
 */
export function createThreadContextStore(
  context: StoreContext,
  threadId: string,
  { maxTailMessages = 2000, embedder, workingMemoryScope }: ContextStoreOptions = {},
): ThreadContextStore {
  const thread = assertThreadId(threadId);
  const memory = {
    threadId: thread,
    scope: workingMemoryTarget(context, { threadId: thread, scope: workingMemoryScope }).scope,
  };
  if (embedder !== undefined) assertEmbedder('options.embedder', embedder);
  // The tenant's and thread's own part: a row id another tenant also has never reaches this one's entries.
  const messageCache = threadContextCache(context, thread);
  return {
    ...(messageCache ? { messageCache } : {}),
    async loadContext() {
      const view = await loadContext(context, thread, { maxTailMessages });
      return {
        snapshot: view.snapshot,
        latestSummary: view.latestSummary,
        tail: view.tail,
        pinned: view.pinned,
        currentVersion: view.currentVersion,
      };
    },
    writeSummary: (input) => writeSummary(context, thread, input),
    writeSnapshot: (input) => writeSnapshot(context, thread, input),
    getWorkingMemory: async () => toContextWorkingMemory(await getWorkingMemory(context, memory)),
    updateWorkingMemory: async ({ content, expectedVersion }) =>
      toContextWorkingMemory(await updateWorkingMemory(context, { ...memory, content, expectedVersion }))!,
    async loadMemory({ query, limit }) {
      const workingMemory = toContextWorkingMemory(await getWorkingMemory(context, memory));
      const recalled =
        limit > 0
          ? await recallMessages(context, { query, threadId: thread, limit: Math.min(limit, 50), embedder })
          : [];
      return {
        workingMemory,
        recalled,
        recall: embedder ? 'hybrid' : 'full-text',
      };
    },
    async searchMessages({ query, limit }) {
      const hits = await searchMessages(context, query, { threadId: thread, limit });
      if (hits.length === 0) return [];
      const { agentMessage } = context.tables;
      const rows = await inTenant(context, (tx) =>
        tx
          .select(messageColumns(context.tables))
          .from(agentMessage)
          .where(
            and(
              ofThread(context, agentMessage, thread),
              inArray(
                agentMessage.sequence,
                hits.map((hit) => hit.sequence),
              ),
              isNull(agentMessage.deletedAt),
            ),
          ),
      );
      const bySequence = new Map(rows.map((row) => [Number(row.sequence), toStoredMessage(row)]));
      return hits.flatMap((hit) => {
        const stored = bySequence.get(hit.sequence);
        return stored ? [stored] : [];
      });
    },
  };
}

function toContextWorkingMemory(document: WorkingMemory | null): ContextWorkingMemory | null {
  return document && { id: document.id, scope: document.scope, content: document.content, version: document.version };
}

/** The part of the store's context cache for one thread of the context's tenant (`thread`: a lower-case uuid). */
export function threadContextCache(context: StoreContext, thread: string): ContextMessageCache | undefined {
  return context.contextCache?.scoped(`${context.tenantId}\u0000${thread}`);
}
