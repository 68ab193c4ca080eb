import { randomUUID } from 'node:crypto';
import type { TenantHistory } from '../../../src/index.js';
import type { TestDatabase } from '../../support/test-database.js';
import type { Deletion, ForkTreePlan } from './fork-tree.js';

/** One thread of a built tree. */
export interface BuiltThread {
  id: string;
  /** Its messages' count. */
  count: number;
  /** Whether it holds a copy of the secret message (the root holds the original). */
  holdsCopy: boolean;
  /** How it was removed before the redaction: hard (true), soft, or not at all. */
  deleted: boolean | 'soft';
}

/** A built tree: the threads, which hold the secret message, and the state of every other message. */
export interface BuiltForkTree {
  threads: BuiltThread[];
  /** The threads (indices) holding the original or a copy of the secret message, and its message id. */
  copies: Array<{ thread: number; messageId: string }>;
  /** Every message that is not a copy of the secret message (in live and soft-deleted threads), as stored. */
  untouched: Array<{ id: string; state: string }>;
  /** How many of those have the secret message's id and sequence (appended on their own in a fork cut before it). */
  sameIdElsewhere: number;
}

const role = (sequence: number) => (sequence % 2 === 1 ? 'user' : 'assistant');

/**
 * Builds `plan` in the store: the root with the secret in one message (and, for span redaction, in its title and
 * metadata, which every fork copies), the forks (each appending messages whose ids repeat the pattern `m-<sequence>`,
 * so a sibling may hold an unrelated `m-<secretAt>`), summaries and snapshots over the copies, then the deletions.
 */
export async function buildForkTree(
  store: TenantHistory,
  plan: ForkTreePlan,
  secret: string,
  admin: TestDatabase['admin'],
): Promise<BuiltForkTree> {
  const spans = plan.mode === 'spans';
  const root = await store.createThread({
    title: spans ? `Keys ${secret}` : 'Keys',
    metadata: { topic: spans ? `${secret} rotation` : 'rotation' },
  });
  for (let sequence = 1; sequence <= plan.rootMessages; sequence++) {
    const secretHere = sequence === plan.secretAt;
    await store.appendMessage(root.id, {
      id: `m-${sequence}`,
      role: role(sequence),
      parts: [{ type: 'text', text: secretHere ? `my key is ${secret}, keep it` : `filler ${randomUUID()}` }],
      metadata: secretHere ? { header: `Bearer ${secret}` } : { source: 'chat' },
    } as never);
  }
  const threads: BuiltThread[] = [{ id: root.id, count: plan.rootMessages, holdsCopy: true, deleted: false }];
  for (const fork of plan.forks) {
    const source = threads[fork.from]!;
    const atSequence = Math.round(fork.cut * source.count);
    const created = await store.forkThread(source.id, { atSequence });
    const thread: BuiltThread = {
      id: created.id,
      count: atSequence + fork.appends,
      holdsCopy: source.holdsCopy && atSequence >= plan.secretAt,
      deleted: false,
    };
    for (let sequence = atSequence + 1; sequence <= thread.count; sequence++)
      await store.appendMessage(thread.id, {
        id: `m-${sequence}`,
        role: role(sequence),
        parts: [{ type: 'text', text: `sibling ${randomUUID()}` }],
      });
    if (fork.derived && thread.holdsCopy) await writeDerived(store, thread.id, plan, secret);
    threads.push(thread);
  }
  await deleteThreads(store, admin, [plan.rootDeletion, ...plan.forks.map((fork) => fork.deletion)], threads);
  const copies = threads.flatMap((thread, index) =>
    thread.holdsCopy ? [{ thread: index, messageId: `m-${plan.secretAt}` }] : [],
  );
  const rows = await admin.query<{ id: string; thread_id: string; message_id: string; parts: unknown; state: string }>(
    'select id, thread_id, message_id, parts, context_state as state from agent_message where tenant_id = $1',
    [store.tenantId],
  );
  const holding = new Set(threads.filter((thread) => thread.holdsCopy).map((thread) => thread.id));
  const others = rows.filter((row) => !(holding.has(row.thread_id) && row.message_id === `m-${plan.secretAt}`));
  return {
    threads,
    copies,
    untouched: others.map((row) => ({ id: row.id, state: JSON.stringify([row.parts, row.state]) })),
    sameIdElsewhere: others.filter((row) => row.message_id === `m-${plan.secretAt}`).length,
  };
}

// A summary quoting the secret over the copy, and a snapshot through it (its JSON quoting the secret under span
// redaction, the only mode that scrubs snapshot JSON).
async function writeDerived(store: TenantHistory, threadId: string, plan: ForkTreePlan, secret: string) {
  const summary = await store.writeSummary(threadId, {
    fromSequence: 1,
    throughSequence: plan.secretAt,
    content: `The user shared the key ${secret}.`,
    tokenCount: 8,
    policyVersion: 'fork-trees-1',
  });
  await store.writeSnapshot(threadId, {
    expectedVersion: 0,
    throughSequence: plan.secretAt,
    summaryId: summary.id,
    includedSequences: [],
    pruned: { note: plan.mode === 'spans' ? `preview of ${secret}` : 'preview' },
    budget: {},
    policyVersion: 'fork-trees-1',
    messagesHash: 'hash',
  });
}

async function deleteThreads(
  store: TenantHistory,
  admin: TestDatabase['admin'],
  deletions: Array<Deletion | null>,
  threads: BuiltThread[],
) {
  const expired: string[] = [];
  for (const [index, deletion] of deletions.entries()) {
    const thread = threads[index]!;
    if (deletion === 'deleteThread') await store.deleteThread(thread.id);
    if (deletion === 'softDeleteThread') await store.softDeleteThread(thread.id);
    if (deletion === 'retention') expired.push(thread.id);
    if (deletion !== null) thread.deleted = deletion === 'softDeleteThread' ? 'soft' : true;
  }
  if (expired.length === 0) return;
  await admin.query(
    "update agent_thread set last_message_at = now() - interval '400 days' where tenant_id = $1 and id = any($2::uuid[])",
    [store.tenantId, expired],
  );
  await store.deleteThreadsOlderThan({ olderThan: new Date(Date.now() - 300 * 86_400_000) });
}
