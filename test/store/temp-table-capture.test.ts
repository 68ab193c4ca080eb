import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, type TenantHistory } from '../../src/index.js';
import { rowsOf, type AgentHistoryDatabase } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { assistantMessage, userMessage } from '../support/fixtures.js';
import { TABLES } from '../support/tables.js';

/**
 * Temporary tables named and shaped like every store table, open to every role, on the connection the store uses:
 * Drizzle names tables in `public` without their schema, and `pg_temp` comes first on a default search path.
 */
const DECOYS = [
  ...TABLES.map((table) => `create temp table ${table} (like public.${table} including defaults)`),
  `grant all on ${TABLES.join(', ')} to public`,
];

/** Every store method, in an order where each finds what the one before wrote; each checks it saw the real rows. */
async function exercise(store: TenantHistory, threadId: string): Promise<string[]> {
  const seen: string[] = [];
  const check = (name: string, ok: boolean) => seen.push(`${name}:${ok}`);
  check('getThread', (await store.getThread(threadId)).title === 'real');
  check(
    'listThreads',
    (await store.listThreads()).threads.some((thread) => thread.id === threadId),
  );
  check('renameThread', (await store.renameThread(threadId, { title: 'real' })).id === threadId);
  check('updateThreadMetadata', (await store.updateThreadMetadata(threadId, { metadata: { a: 1 } })).id === threadId);
  check('listMessages', (await store.listMessages(threadId)).messages.length === 1);
  check('getMessage', (await store.getMessage(threadId, 'u1')).message.id === 'u1');
  check('searchMessages', (await store.searchMessages('needle')).length === 1);
  const run = await store.startRun(threadId);
  check('getRun', (await store.getRun(run.id)).id === run.id);
  check('appendMessage', (await store.appendMessage(threadId, userMessage('u2', 'more'))).stored.sequence === 2);
  const pending = await store.beginAssistantMessage(threadId, { messageId: 'a1', runId: run.id });
  check('beginAssistantMessage', pending.stored.sequence === 3);
  await store.checkpointMessage(threadId, 'a1', { parts: [{ type: 'text', text: 'part' }] });
  check(
    'finalizeMessage',
    (await store.finalizeMessage(threadId, 'a1', { status: 'completed', parts: assistantMessage('a1', 'done').parts }))
      .status === 'completed',
  );
  check('finishRun', (await store.finishRun(run.id, { status: 'completed' })).status === 'completed');
  check(
    'failRun',
    (await store.failRun((await store.startRun(threadId)).id, { error: new Error('x') })).status === 'failed',
  );
  check('excludeMessages', (await store.excludeMessages(threadId, ['u2'], { reason: 'x' })).length === 1);
  check('includeMessages', (await store.includeMessages(threadId, ['u2'])).length === 1);
  check('pinMessage', (await store.pinMessage(threadId, 'u1')).pinned);
  check('unpinMessage', !(await store.unpinMessage(threadId, 'u1')).pinned);
  const summary = await store.writeSummary(threadId, {
    fromSequence: 1,
    throughSequence: 2,
    content: 's',
    tokenCount: 1,
    policyVersion: 'p',
  });
  check(
    'listSummaries',
    (await store.listSummaries(threadId)).some((row) => row.id === summary.id),
  );
  await store.writeSnapshot(threadId, {
    expectedVersion: 0,
    throughSequence: 2,
    summaryId: summary.id,
    includedSequences: [3],
    policyVersion: 'p',
    messagesHash: 'h',
  });
  check('loadContext', (await store.loadContext(threadId)).currentVersion === 1);
  check(
    'redactMessage',
    (await store.redactMessage(threadId, 'u2', { actor: 'x', reason: 'x' })).contextState === 'redacted',
  );
  const fork = await store.forkThread(threadId, { atSequence: 3 });
  check('forkThread', (await store.listMessages(fork.id)).messages.length === 3);
  check('recoverAbandonedMessages', Array.isArray(await store.recoverAbandonedMessages()));
  await store.softDeleteThread(fork.id);
  await store.deleteThread(fork.id);
  check('deleteThreadsOlderThan', (await store.deleteThreadsOlderThan({ olderThan: new Date(0) })) === 0);
  return seen;
}

describe.each(BACKENDS)('temporary tables named like the store tables on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** One connection, as the app login on PostgreSQL 15 (PGlite has only one), with the decoys on it. */
  async function decoyedConnection(): Promise<{ db: AgentHistoryDatabase; close: () => Promise<void> }> {
    if (backend === 'pglite') {
      for (const statement of DECOYS) await database.admin.query(statement);
      return {
        db: database.db,
        close: async () => {
          await database.admin.query(`drop table ${TABLES.map((table) => `pg_temp.${table}`).join(', ')}`);
        },
      };
    }
    const client = postgres(database.appUrl!, { max: 1, onnotice: () => {} });
    // LIKE reads the real table's definition, which the (NOINHERIT) login may do only as the application role.
    for (const statement of ['set role agent_history_app', ...DECOYS, 'reset role']) await client.unsafe(statement);
    return { db: drizzlePostgres({ client }) as unknown as AgentHistoryDatabase, close: () => client.end() };
  }

  it.each([
    ['tenant-wide', undefined],
    ['user-scoped', 'u-1'],
  ] as const)('should have every %s store method read and write the real tables', async (_mode, userId) => {
    const tenantId = randomUUID();
    const real = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const thread = await real.createThread({ title: 'real', userId });
    await real.appendMessage(thread.id, userMessage('u1', 'the needle'));
    const connection = await decoyedConnection();
    try {
      const store = createAgentHistory({ db: connection.db, appendBatching: false }).forTenant(
        tenantId,
        userId === undefined ? undefined : { userId },
      );
      const seen = await exercise(store, thread.id);
      expect(seen.filter((entry) => entry.endsWith(':false'))).toEqual([]);
      const captured: Record<string, number> = {};
      for (const table of TABLES)
        captured[table] = rowsOf(await connection.db.execute(sql.raw(`select 1 from pg_temp.${table}`))).length;
      expect(captured).toEqual(Object.fromEntries(TABLES.map((table) => [table, 0])));
      const [count] = await database.admin.query<{ n: number }>(
        'select count(*)::int as n from public.agent_message where thread_id = $1',
        [thread.id],
      );
      expect(count).toEqual({ n: 3 });
    } finally {
      await connection.close();
    }
  });
});
