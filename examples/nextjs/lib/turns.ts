import { and, asc, eq, inArray } from 'drizzle-orm';
import { withTenant } from 'agent-history';
import { agentMessage, DEFAULT_APP_ROLE } from 'agent-history/schema';
import type { TenantTransaction } from 'agent-history';
import { getDatabase } from './database';
import { currentUserId, DEMO_TENANT_ID } from './tenant';

/**
 * A turn is one question of the user and everything answering it: the answer, a regenerated answer, the continuation
 * after a tool approval. Turn N of a thread is the part of the log from its Nth user message (by sequence) up to the
 * next one, so its number never changes: later turns only add user messages after it, and nothing renumbers.
 */
export type TurnOf = (sequence: number) => number;

/** Sorted user-message sequences → the turn of any sequence (0 before the first question). */
export function turnIndex(userSequences: number[]): TurnOf {
  const sorted = [...userSequences].sort((a, b) => a - b);
  return (sequence) => {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (sorted[middle]! <= sequence) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

/**
 * A read of the signed-in user's rows, under the same row-level security as the store (`withTenant` with the app
 * role and the user): a foreign thread reads as empty.
 */
export async function readAsUser<RESULT>(work: (tx: TenantTransaction) => Promise<RESULT>): Promise<RESULT> {
  return withTenant(
    await getDatabase(),
    { tenantId: DEMO_TENANT_ID, role: DEFAULT_APP_ROLE, userId: await currentUserId() },
    work,
  );
}

/** The user messages' sequences and times of some threads, oldest first. */
export async function userMessagesOf(tx: TenantTransaction, threadIds: string[]) {
  if (threadIds.length === 0) return [];
  return tx
    .select({ threadId: agentMessage.threadId, sequence: agentMessage.sequence, createdAt: agentMessage.createdAt })
    .from(agentMessage)
    .where(and(inArray(agentMessage.threadId, threadIds), eq(agentMessage.role, 'user')))
    .orderBy(asc(agentMessage.sequence));
}
