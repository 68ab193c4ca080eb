import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentHistory, NotFoundError, type TenantHistory } from '../../src/index.js';
import { openTestDatabase, type TestDatabase } from './support/citus-test-database.js';

// The Citus form of test/reliability/tenant-isolation.postgres.test.ts's sweep (whose no-tenant probes are
// multi-shard queries, which this suite makes raise): every store method aimed at a victim's rows by an attacker whose
// tenant sits in the victim's shard answers NotFoundError, and the victim's rows stay byte-identical.

const TABLES = [
  'agent_thread',
  'agent_run',
  'agent_message',
  'agent_summary',
  'agent_context_snapshot',
  'agent_audit_event',
];
const text = (value: string) => [{ type: 'text', text: value }];

describe('Citus: cross-tenant store calls from a tenant in the same shard', () => {
  let database: TestDatabase;
  let victim: TenantHistory;
  let attacker: TenantHistory;
  const target = { threadId: '', messageId: 'v-1', runId: '', streamingMessageId: 'v-stream' };
  let attackerThread = '';

  const dump = async (tenantId: string) => {
    const tables: Record<string, unknown[]> = {};
    for (const table of TABLES) {
      tables[table] = await database.admin.query(`select * from ${table} where tenant_id = $1 order by id`, [tenantId]);
    }
    return JSON.stringify(tables);
  };

  beforeAll(async () => {
    database = await openTestDatabase('postgres');
    const shardOf = async (tenantId: string) =>
      (
        await database.admin.query<{ shard: string }>(
          `select get_shard_id_for_distribution_column('agent_thread', $1::uuid) as shard`,
          [tenantId],
        )
      )[0]!.shard;
    const victimId = randomUUID();
    let attackerId = randomUUID();
    while ((await shardOf(attackerId)) !== (await shardOf(victimId))) attackerId = randomUUID();
    const history = createAgentHistory({ db: database.db });
    victim = history.forTenant(victimId);
    attacker = history.forTenant(attackerId);

    const thread = await victim.createThread({ title: 'victim' });
    target.threadId = thread.id;
    const run = await victim.startRun(thread.id);
    target.runId = run.id;
    await victim.appendMessage(thread.id, { id: 'v-1', role: 'user', parts: text('victim secret') });
    await victim.appendMessage(thread.id, { id: 'v-2', role: 'assistant', parts: text('victim answer') });
    await victim.beginAssistantMessage(thread.id, { messageId: 'v-stream', runId: run.id });
    await victim.writeSummary(thread.id, {
      fromSequence: 1,
      throughSequence: 2,
      content: 'victim summary',
      tokenCount: 3,
      policyVersion: 'p',
    });
    await victim.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: 2,
      includedSequences: [1, 2],
      policyVersion: 'p',
      messagesHash: 'h',
    });
    attackerThread = (await attacker.createThread({ title: 'attacker' })).id;
  });
  afterAll(() => database.close());

  it('should answer NotFoundError to every store method aimed at the victim, and leave its rows byte-identical', async () => {
    const before = await dump(victim.tenantId);
    const t = target;
    const operations: Record<string, () => Promise<unknown>> = {
      getThread: () => attacker.getThread(t.threadId),
      getMessage: () => attacker.getMessage(t.threadId, t.messageId),
      getMessageInOwnThread: () => attacker.getMessage(attackerThread, t.messageId),
      getRun: () => attacker.getRun(t.runId),
      loadContext: () => attacker.loadContext(t.threadId),
      listSummaries: () => attacker.listSummaries(t.threadId),
      listMessages: () => attacker.listMessages(t.threadId, { limit: 10 }),
      listChatMessages: () => attacker.listChatMessages(t.threadId, { limit: 10 }),
      renameThread: () => attacker.renameThread(t.threadId, { title: 'pwned' }),
      updateThreadMetadata: () => attacker.updateThreadMetadata(t.threadId, { metadata: { pwned: true } }),
      pinMessage: () => attacker.pinMessage(t.threadId, t.messageId),
      unpinMessage: () => attacker.unpinMessage(t.threadId, t.messageId),
      checkpointMessage: () => attacker.checkpointMessage(t.threadId, t.streamingMessageId, { parts: text('pwned') }),
      finalizeMessage: () =>
        attacker.finalizeMessage(t.threadId, t.streamingMessageId, { status: 'failed', parts: text('pwned') }),
      finishRun: () => attacker.finishRun(t.runId, { status: 'failed', usage: { inputTokens: 1 } }),
      failRun: () => attacker.failRun(t.runId, { error: new Error('pwned') }),
      appendMessage: () => attacker.appendMessage(t.threadId, { id: 'x-1', role: 'user', parts: text('pwned') }),
      appendWithForeignRun: () =>
        attacker.appendMessage(
          attackerThread,
          { id: 'x-2', role: 'assistant', parts: text('pwned') },
          { runId: t.runId },
        ),
      beginAssistantMessage: () => attacker.beginAssistantMessage(t.threadId, { messageId: 'x-3' }),
      startRun: () => attacker.startRun(t.threadId, { model: 'pwned' }),
      excludeMessages: () => attacker.excludeMessages(t.threadId, [t.messageId], { reason: 'pwned' }),
      includeMessages: () => attacker.includeMessages(t.threadId, [t.messageId]),
      redactMessage: () => attacker.redactMessage(t.threadId, t.messageId, { actor: 'attacker', reason: 'pwned' }),
      forkThread: () => attacker.forkThread(t.threadId, { atSequence: 1 }),
      softDeleteThread: () => attacker.softDeleteThread(t.threadId),
      deleteThread: () => attacker.deleteThread(t.threadId),
      writeSummary: () =>
        attacker.writeSummary(t.threadId, {
          fromSequence: 1,
          throughSequence: 1,
          content: 'pwned',
          tokenCount: 1,
          policyVersion: 'p',
        }),
      writeSnapshot: () =>
        attacker.writeSnapshot(t.threadId, {
          expectedVersion: 1,
          throughSequence: 1,
          includedSequences: [1],
          policyVersion: 'p',
          messagesHash: 'pwned',
        }),
    };
    const outcomes: Record<string, string> = {};
    for (const [name, operation] of Object.entries(operations)) {
      outcomes[name] = await operation().then(
        () => 'succeeded',
        (error: unknown) => (error instanceof NotFoundError ? 'NotFoundError' : String(error)),
      );
    }
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(operations).map((name) => [name, 'NotFoundError'])));

    // Calls scoped to the attacker's own tenant see nothing of the victim, and its retention leaves the victim alone.
    expect((await attacker.listThreads()).threads.map((thread) => thread.title)).toEqual(['attacker']);
    expect(await attacker.searchMessages('victim')).toEqual([]);
    const farFuture = new Date(Date.now() + 10 * 365 * 86_400_000);
    const attackerLater = createAgentHistory({ db: database.db, _internal: { now: () => farFuture } }).forTenant(
      attacker.tenantId,
    );
    await attackerLater.recoverAbandonedMessages();
    await attackerLater.deleteThreadsOlderThan({ olderThan: farFuture });
    expect(await dump(victim.tenantId)).toEqual(before);
  });
});
