import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgentHistory, InvalidArgumentError, MIGRATIONS_FOLDER, NotFoundError, type AppendBatchingOptions } from '../../src/index.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/test-database.js';

const userMessage = (id: string, text = `text of ${id}`) => ({ id, role: 'user' as const, parts: [{ type: 'text', text }] });
const range = (from: number, through: number) => Array.from({ length: through - from + 1 }, (_, index) => from + index);

// Write combining: with `maxInFlight: 1`, the first of a burst of appends is sent alone and every append that
// arrives while it runs is queued, then sent as one statement. `xmin` tells which rows one transaction wrote.
describe.each(BACKENDS)('append batching on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(backend, { poolSize: 8 });
  });
  afterAll(() => database.close());

  /** Errors of whole batches (each rolled back and was resent one append at a time). */
  const batchErrors: unknown[] = [];
  const history = (appendBatching?: AppendBatchingOptions | false) =>
    createAgentHistory({ db: database.db, appendBatching, _internal: { onAppendBatchError: (error) => batchErrors.push(error) } });
  const rowsOf = (threadId: string) =>
    database.admin.query<{ message_id: string; sequence: string; tx: string; tenant_id: string }>(
      'select message_id, sequence, xmin::text as tx, tenant_id from agent_message where thread_id = $1 order by sequence',
      [threadId],
    );
  const transactionsOf = async (threadId: string) => new Set((await rowsOf(threadId)).map((row) => row.tx)).size;

  it('should send a burst of appends as one statement after the first, with the same sequences, rows and results as one by one', async () => {
    const store = history({ maxInFlight: 1 }).forTenant(randomUUID());
    const thread = await store.createThread();
    const results = await Promise.all(range(1, 20).map((index) => store.appendMessage(thread.id, userMessage(`m${index}`))));
    const rows = await rowsOf(thread.id);
    expect(rows.map((row) => Number(row.sequence))).toEqual(range(1, 20));
    // One transaction for the first append, one for the 19 queued behind it.
    expect(new Set(rows.map((row) => row.tx)).size).toBe(2);
    expect(results.every((result) => result.created)).toBe(true);
    // Every caller is told its own row.
    const told = new Map(results.map((result) => [result.stored.message.id, result.stored.sequence]));
    expect(told).toEqual(new Map(rows.map((row) => [row.message_id, Number(row.sequence)])));
    for (const result of results) {
      expect(result.stored.message).toEqual(userMessage(result.stored.message.id));
      expect(result.stored.tokenCount).toBeGreaterThan(0);
    }
    const page = await store.listMessages(thread.id, { limit: 100 });
    expect(page.messages.map((stored) => [stored.message.id, stored.sequence]).reverse()).toEqual(rows.map((row) => [row.message_id, Number(row.sequence)]));
  });

  it('should keep each appender in its own order and every sequence gapless when 16 appenders share one thread', async () => {
    const store = history({ maxInFlight: 2 }).forTenant(randomUUID());
    const thread = await store.createThread();
    const byAppender = await Promise.all(
      range(1, 16).map(async (appender) => {
        const sequences: number[] = [];
        for (const index of range(1, 6)) sequences.push((await store.appendMessage(thread.id, userMessage(`w${appender}-${index}`))).stored.sequence);
        return sequences;
      }),
    );
    expect(byAppender.flat().sort((a, b) => a - b)).toEqual(range(1, 96));
    for (const sequences of byAppender) expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(await transactionsOf(thread.id)).toBeLessThan(96);
  });

  it('should apply idempotency within a batch: a repeated message id or client request id returns the row stored earlier in it', async () => {
    const store = history({ maxInFlight: 1 }).forTenant(randomUUID());
    const thread = await store.createThread();
    const [first, a, aAgain, b, bAgain] = await Promise.all([
      store.appendMessage(thread.id, userMessage('first')),
      store.appendMessage(thread.id, userMessage('a', 'hello')),
      store.appendMessage(thread.id, userMessage('a', 'hello')),
      store.appendMessage(thread.id, userMessage('b', 'question'), { clientRequestId: 'request-b' }),
      store.appendMessage(thread.id, userMessage('b-retry', 'question'), { clientRequestId: 'request-b' }),
    ]);
    expect([first, a, aAgain, b, bAgain].map((result) => [result.stored.message.id, result.created, result.stored.sequence])).toEqual([
      ['first', true, 1],
      ['a', true, 2],
      ['a', false, 2],
      ['b', true, 3],
      ['b', false, 3],
    ]);
    expect(aAgain.stored.rowId).toBe(a.stored.rowId);
    expect(bAgain.stored.message).toEqual(userMessage('b', 'question'));
    const rows = await rowsOf(thread.id);
    expect(rows.map((row) => row.message_id)).toEqual(['first', 'a', 'b']);
    expect(new Set(rows.slice(1).map((row) => row.tx)).size).toBe(1);
  });

  it('should give a failing append its own typed error and still store the others of its batch, gapless and in order', async () => {
    const store = history({ maxInFlight: 1 }).forTenant(randomUUID());
    const thread = await store.createThread();
    const missingThread = randomUUID();
    const missingRun = randomUUID();
    const results = await Promise.allSettled([
      store.appendMessage(thread.id, userMessage('m1')),
      store.appendMessage(thread.id, userMessage('m2')),
      store.appendMessage(missingThread, userMessage('elsewhere')),
      store.appendMessage(thread.id, userMessage('m3'), { runId: missingRun }),
      store.appendMessage(thread.id, userMessage('m4')),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    // The missing run failed the batch's statement (a foreign key), so its items were resent one by one.
    expect(batchErrors.splice(0)).toHaveLength(1);
    const thread404 = (results[2] as PromiseRejectedResult).reason;
    expect(thread404).toBeInstanceOf(NotFoundError);
    expect(String(thread404.message)).toContain(missingThread);
    const run404 = (results[3] as PromiseRejectedResult).reason;
    expect(run404).toBeInstanceOf(NotFoundError);
    expect(String(run404.message)).toContain(missingRun);
    const rows = await rowsOf(thread.id);
    expect(rows.map((row) => [row.message_id, Number(row.sequence)])).toEqual([['m1', 1], ['m2', 2], ['m4', 3]]);
    const [threadRow] = await database.admin.query<{ next_sequence: string }>('select next_sequence from agent_thread where id = $1', [thread.id]);
    expect(Number(threadRow!.next_sequence)).toBe(3);
  });

  it('should batch each tenant on its own, under its own tenant, when tenants append at once', async () => {
    const shared = history({ maxInFlight: 1 });
    const [one, two] = [shared.forTenant(randomUUID()), shared.forTenant(randomUUID())];
    const [threadOne, threadTwo] = [await one.createThread(), await two.createThread()];
    await Promise.all(range(1, 10).flatMap((index) => [one.appendMessage(threadOne.id, userMessage(`one-${index}`)), two.appendMessage(threadTwo.id, userMessage(`two-${index}`))]));
    const [rowsOne, rowsTwo] = [await rowsOf(threadOne.id), await rowsOf(threadTwo.id)];
    expect(rowsOne.map((row) => Number(row.sequence))).toEqual(range(1, 10));
    expect(rowsTwo.map((row) => Number(row.sequence))).toEqual(range(1, 10));
    expect(new Set(rowsOne.map((row) => row.tenant_id))).toEqual(new Set([one.tenantId]));
    expect(new Set(rowsTwo.map((row) => row.tenant_id))).toEqual(new Set([two.tenantId]));
    // No statement mixed the tenants: no transaction wrote rows of both.
    const transactionsOne = new Set(rowsOne.map((row) => row.tx));
    expect(rowsTwo.some((row) => transactionsOne.has(row.tx))).toBe(false);
    // A tenant cannot append to another tenant's thread through a batch either.
    const crossed = await Promise.allSettled([one.appendMessage(threadOne.id, userMessage('own')), one.appendMessage(threadTwo.id, userMessage('foreign')), one.appendMessage(threadOne.id, userMessage('own-2'))]);
    expect(crossed.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((crossed[1] as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
    expect((await rowsOf(threadTwo.id)).map((row) => row.message_id)).not.toContain('foreign');
  });

  it('should send every append alone with appendBatching: false, or when a batch would pass maxBatchBytes', async () => {
    for (const options of [false, { maxInFlight: 1, maxBatchBytes: 1 }] as const) {
      const store = history(options).forTenant(randomUUID());
      const thread = await store.createThread();
      await Promise.all(range(1, 8).map((index) => store.appendMessage(thread.id, userMessage(`m${index}`))));
      expect(await transactionsOf(thread.id)).toBe(8);
    }
    const store = history({ maxInFlight: 1, maxBatchSize: 3 }).forTenant(randomUUID());
    const thread = await store.createThread();
    await Promise.all(range(1, 10).map((index) => store.appendMessage(thread.id, userMessage(`m${index}`))));
    // 1 alone, then the 9 queued behind it in batches of at most 3.
    expect(await transactionsOf(thread.id)).toBe(4);
  });

  it('should send every append alone, after one failed batch, on a database migrated without the batch function', async () => {
    await database.admin.query('drop function agent_history_append_messages(uuid, text, jsonb)');
    try {
      batchErrors.length = 0;
      const store = history({ maxInFlight: 1 }).forTenant(randomUUID());
      const thread = await store.createThread();
      for (const burst of [1, 2]) {
        const results = await Promise.all(range(1, 5).map((index) => store.appendMessage(thread.id, userMessage(`b${burst}-${index}`))));
        expect(results.every((result) => result.created)).toBe(true);
      }
      expect((await rowsOf(thread.id)).map((row) => Number(row.sequence))).toEqual(range(1, 10));
      // Only the first batch was tried; every append after it went alone.
      expect(batchErrors).toHaveLength(1);
      expect(await transactionsOf(thread.id)).toBe(10);
    } finally {
      const migration = readFileSync(join(MIGRATIONS_FOLDER, '0004_append_batch.sql'), 'utf8');
      for (const statement of migration.split('--> statement-breakpoint')) await database.admin.query(statement);
    }
  });

  it('should reject bad batching options with a typed error naming the value', () => {
    for (const [options, argument] of [
      [{ maxInFlight: 0 }, 'appendBatching.maxInFlight'],
      [{ maxBatchSize: 1.5 }, 'appendBatching.maxBatchSize'],
      [{ maxBatchBytes: '4MB' }, 'appendBatching.maxBatchBytes'],
      ['yes', 'appendBatching'],
    ] as const) {
      let thrown: unknown;
      try {
        history(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as Error).message).toContain(argument);
      expect((thrown as Error).message).toContain(JSON.stringify(Object.values(typeof options === 'object' ? options : { options })[0]));
    }
  });

  if (backend === 'postgres') {
    it('should not deadlock when two processes batch appends to the same threads in opposite orders', async () => {
      const tenantId = randomUUID();
      const [first, second] = [history({ maxInFlight: 1 }).forTenant(tenantId), history({ maxInFlight: 1 }).forTenant(tenantId)];
      const threads = await Promise.all(range(1, 8).map(() => first.createThread()));
      batchErrors.length = 0;
      for (const round of range(1, 25)) {
        await Promise.all([
          ...threads.map((thread) => first.appendMessage(thread.id, userMessage(`first-${round}-${thread.id}`))),
          ...[...threads].reverse().map((thread) => second.appendMessage(thread.id, userMessage(`second-${round}-${thread.id}`))),
        ]);
      }
      for (const thread of threads) expect((await rowsOf(thread.id)).map((row) => Number(row.sequence))).toEqual(range(1, 50));
      // A deadlock would have failed a batch (and been hidden by the one-by-one resend): none did.
      expect(batchErrors).toEqual([]);
    });
  }
});
