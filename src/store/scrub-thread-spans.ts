import { and, eq } from 'drizzle-orm';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { replaceSpans } from './replace-spans.js';
import type { StoreContext } from './store-context.js';
import { ofThread } from './of-thread.js';

/** Cuts the spans out of a thread's title and metadata, its runs' errors and metadata, and its snapshots' JSON. */
export async function scrubThreadSpans(
  context: StoreContext,
  tx: TenantTransaction,
  threadId: string,
  spans: string[],
  replacement: string,
): Promise<void> {
  const { agentContextSnapshot, agentThread, agentRun } = context.tables;
  const scrub = <VALUE>(value: VALUE) => replaceSpans(value, spans, replacement);
  const [threadRow] = await tx
    .select({ title: agentThread.title, metadata: agentThread.metadata })
    .from(agentThread)
    .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, threadId)));
  if (threadRow) {
    await tx
      .update(agentThread)
      .set({ title: threadRow.title === null ? null : scrub(threadRow.title), metadata: scrub(threadRow.metadata) })
      .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, threadId)));
  }
  const runs = await tx
    .select({ id: agentRun.id, error: agentRun.error, metadata: agentRun.metadata })
    .from(agentRun)
    .where(ofThread(context, agentRun, threadId));
  for (const run of runs) {
    const error = run.error === null ? null : scrub(run.error);
    const metadata = scrub(run.metadata);
    if (
      JSON.stringify(error) === JSON.stringify(run.error) &&
      JSON.stringify(metadata) === JSON.stringify(run.metadata)
    )
      continue;
    await tx
      .update(agentRun)
      .set({ error, metadata })
      .where(and(eq(agentRun.tenantId, context.tenantId), eq(agentRun.id, run.id)));
  }
  const snapshots = await tx
    .select({ id: agentContextSnapshot.id, pruned: agentContextSnapshot.pruned, budget: agentContextSnapshot.budget })
    .from(agentContextSnapshot)
    .where(ofThread(context, agentContextSnapshot, threadId));
  for (const snapshot of snapshots) {
    const pruned = scrub(snapshot.pruned);
    const budget = scrub(snapshot.budget);
    if (
      JSON.stringify(pruned) === JSON.stringify(snapshot.pruned) &&
      JSON.stringify(budget) === JSON.stringify(snapshot.budget)
    )
      continue;
    await tx
      .update(agentContextSnapshot)
      .set({ pruned, budget })
      .where(and(eq(agentContextSnapshot.tenantId, context.tenantId), eq(agentContextSnapshot.id, snapshot.id)));
  }
}
