import { and, inArray, isNull } from 'drizzle-orm';
import type { ContextStore } from '../model/context-store.js';
import { loadContext } from './load-context.js';
import { writeSnapshot } from './write-snapshot.js';
import { writeSummary } from './write-summary.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { searchMessages } from './search-messages.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertThreadId } from '../errors/assert-input.js';
import { ofThread } from './of-thread.js';

/**
 * The context engine's persistence ({@link ContextStore}) for one thread of one tenant, on the Postgres store:
 * a consistent load (snapshot, newest valid summary, tail after the inclusive boundary, pinned messages),
 * summary and snapshot writes with optimistic versioning, and full-text memory search within the thread.
 */
export function createThreadContextStore(
  context: StoreContext,
  threadId: string,
  { maxTailMessages = 2000 }: { maxTailMessages?: number } = {},
): ContextStore {
  const thread = assertThreadId(threadId);
  return {
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
