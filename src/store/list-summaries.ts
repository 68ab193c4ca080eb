import { asc } from 'drizzle-orm';
import { assertThreadId } from '../errors/assert-input.js';
import type { StoredSummary } from '../model/stored-rows.js';
import { summaryColumns, toSummary } from './context-artifact-rows.js';
import { requireThread } from './require-thread.js';
import { inTenant, type StoreContext } from './store-context.js';
import { ofThread } from './of-thread.js';

/** The thread's summaries, oldest range first (stale ones included, flagged). */
export function listSummaries(context: StoreContext, threadId: string): Promise<StoredSummary[]> {
  const thread = assertThreadId(threadId);
  const { agentSummary } = context.tables;
  return inTenant(context, async (tx) => {
    await requireThread(context, tx, thread);
    const rows = await tx
      .select(summaryColumns(context))
      .from(agentSummary)
      .where(ofThread(context, agentSummary, thread))
      .orderBy(asc(agentSummary.throughSequence), asc(agentSummary.createdAt));
    return rows.map(toSummary);
  });
}
