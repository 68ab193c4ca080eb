import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import {
  createAgentHistory,
  InvalidArgumentError,
  NotFoundError,
  type AppendBatchingOptions,
} from '../../src/index.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { range, slowForLongTexts, userMessage } from '../support/fixtures.js';
import { SETTLE_TIMEOUT_MS, waitUntil } from '../support/time-limits.js';

// Write combining: a statement leaves at the end of the event loop's turn, with every append made in that turn;
// the appends that arrive while every slot (or their thread) is busy are queued, then sent as one statement.
// `xmin` tells which rows one transaction wrote.
describe.each(BACKENDS)('append batching on %s', (backend) => {
  const database = useTestDatabase(backend, { poolSize: 8 });

  /** Errors of whole batches (each rolled back and was resent one append at a time). */
  const batchErrors: unknown[] = [];
  // These tests assert which appends share a statement, so a statement slowed by a loaded machine must not give
  // up its slot (stalledAfterMs) unless a test asks for it.
  const history = (appendBatching?: AppendBatchingOptions | false) =>
    createAgentHistory({
      db: database.db,
      appendBatching: appendBatching === false ? false : { stalledAfterMs: 600_000, ...appendBatching },
      _internal: { onAppendBatchError: (error) => batchErrors.push(error) },
    });
  const rowsOf = (threadId: string) =>
    database.admin.query<{ message_id: string; sequence: string; tx: string; tenant_id: string }>(
      'select message_id, sequence, xmin::text as tx, tenant_id from agent_message where thread_id = $1 order by sequence',
      [threadId],
    );
  const transactionsOf = async (threadId: string) => new Set((await rowsOf(threadId)).map((row) => row.tx)).size;
  /** Append statements (single or batch) of this test database waiting on a row lock (other files share the server). */
  const appendsWaitingOnLocks = async () =>
    (
      await database.admin.query(
        `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%agent_history_append_message%'`,
      )
    ).length;
  /** Runs `work` while another writer (its own connection, in a transaction) holds the rows of `threadIds`. */
  const whileAnotherWriterHolds = async (threadIds: string[], work: () => Promise<void>) => {
    const holder = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    try {
      await holder.begin(async (tx) => {
        await tx`select 1 from agent_thread where id in ${tx(threadIds)} for update`;
        await work();
      });
    } finally {
      await holder.end();
    }
  };

  it('should send a burst of appends made in one turn as one statement, with the same sequences, rows and results as one by one', async () => {
    const store = history({ maxInFlight: 1 }).forTenant(randomUUID());
    const thread = await store.createThread();
    const results = await Promise.all(
      range(1, 20).map((index) => store.appendMessage(thread.id, userMessage(`m${index}`))),
    );
    const rows = await rowsOf(thread.id);
    // In the order the appends were made, in one transaction: the first did not leave alone.
    expect(rows.map((row) => [row.message_id, Number(row.sequence)])).toEqual(
      range(1, 20).map((index) => [`m${index}`, index]),
    );
    expect(new Set(rows.map((row) => row.tx)).size).toBe(1);
    expect(results.every((result) => result.created)).toBe(true);
    // Every caller is told its own row.
    const told = new Map(results.map((result) => [result.stored.message.id, result.stored.sequence]));
    expect(told).toEqual(new Map(rows.map((row) => [row.message_id, Number(row.sequence)])));
    for (const result of results) {
      expect(result.stored.message).toEqual(userMessage(result.stored.message.id));
      expect(result.stored.tokenCount).toBeGreaterThan(0);
    }
    const page = await store.listMessages(thread.id, { limit: 100 });
    expect(page.messages.map((stored) => [stored.message.id, stored.sequence]).reverse()).toEqual(
      rows.map((row) => [row.message_id, Number(row.sequence)]),
    );
  });

  it('should keep the call order of concurrent appends to one thread when an earlier one takes turns to count', async () => {
    // A long message is counted through countAsync, which gives the event loop turns; the short ones behind it are
    // counted at once. They must still take the sequences in the order the appends were made.
    const store = createAgentHistory({ db: database.db, tokenCounter: slowForLongTexts }).forTenant(randomUUID());
    const thread = await store.createThread();
    const other = await store.createThread();
    const long = { id: 'm1', role: 'user' as const, parts: [{ type: 'text' as const, text: 'x '.repeat(20_000) }] };
    const finished: string[] = [];
    const appends = [
      store.appendMessage(thread.id, long),
      ...range(2, 6).map((index) => store.appendMessage(thread.id, userMessage(`m${index}`))),
      // Another thread does not wait for this one's lane.
      store.appendMessage(other.id, userMessage('o1')).then(() => finished.push('o1')),
    ];
    void appends[0]!.then(() => finished.push('m1'));
    await Promise.all(appends);
    expect((await rowsOf(thread.id)).map((row) => [row.message_id, Number(row.sequence)])).toEqual(
      range(1, 6).map((index) => [`m${index}`, index]),
    );
    expect(finished[0]).toBe('o1');
  });

  it('should send the appends of one turn to 12 threads as one statement, each thread its sequence 1', async () => {
    const tenantId = randomUUID();
    const store = history().forTenant(tenantId);
    const threads = await Promise.all(range(1, 12).map(() => store.createThread()));
    await Promise.all(threads.map((thread, index) => store.appendMessage(thread.id, userMessage(`m${index}`))));
    const rows = await database.admin.query<{ sequence: string; tx: string }>(
      'select sequence, xmin::text as tx from agent_message where tenant_id = $1',
      [tenantId],
    );
    expect(rows.map((row) => Number(row.sequence))).toEqual(threads.map(() => 1));
    expect(new Set(rows.map((row) => row.tx)).size).toBe(1);
  });

  it('should answer every append, gapless in call order per thread, when one arrives in every turn while others are in flight', async () => {
    // A pump that each new append postponed would never send: 200 turns, one append each, to 5 threads.
    const store = history().forTenant(randomUUID());
    const threads = await Promise.all(range(1, 5).map(() => store.createThread()));
    const calls: Array<Promise<{ stored: { sequence: number } }>> = [];
    for (const turn of range(1, 200)) {
      calls.push(store.appendMessage(threads[turn % 5]!.id, userMessage(`t${turn}`)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = await Promise.all(calls);
    for (const [index, thread] of threads.entries()) {
      const mine = results.filter((_, turn) => (turn + 1) % 5 === index).map((result) => result.stored.sequence);
      expect(mine).toEqual(range(1, 40));
      expect((await rowsOf(thread.id)).map((row) => row.message_id)).toEqual(
        range(1, 200)
          .filter((turn) => turn % 5 === index)
          .map((turn) => `t${turn}`),
      );
    }
  });

  it('should keep each appender in its own order and every sequence gapless when 16 appenders share one thread', async () => {
    const store = history({ maxInFlight: 2 }).forTenant(randomUUID());
    const thread = await store.createThread();
    const byAppender = await Promise.all(
      range(1, 16).map(async (appender) => {
        const sequences: number[] = [];
        for (const index of range(1, 6))
          sequences.push((await store.appendMessage(thread.id, userMessage(`w${appender}-${index}`))).stored.sequence);
        return sequences;
      }),
    );
    expect(byAppender.flat().sort((a, b) => a - b)).toEqual(range(1, 96));
    for (const sequences of byAppender) expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(await transactionsOf(thread.id)).toBeLessThan(96);
  });

  it('should let the appenders a statement answered join the next one of their thread, not go alone or alternate', async () => {
    // 16 appenders, each appending again as soon as it is answered: every statement carries all 16 (the answered
    // appenders' next appends join the ones queued while it ran). A thread freed before its answered appenders are
    // back sent the first of them alone and the rest as a second statement (1, 15, 1, 15, ...): twice the commits,
    // each waiting on the last.
    const store = history({ maxInFlight: 1 }).forTenant(randomUUID());
    const thread = await store.createThread();
    await Promise.all(
      range(1, 16).map(async (appender) => {
        for (const index of range(1, 6)) await store.appendMessage(thread.id, userMessage(`w${appender}-${index}`));
      }),
    );
    const sizes: number[] = [];
    let previous = '';
    for (const row of await rowsOf(thread.id)) {
      if (row.tx !== previous) sizes.push(0);
      previous = row.tx;
      sizes[sizes.length - 1]! += 1;
    }
    expect(sizes).toEqual(range(1, 6).map(() => 16));
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
    expect(
      [first, a, aAgain, b, bAgain].map((result) => [result.stored.message.id, result.created, result.stored.sequence]),
    ).toEqual([
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
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    // The missing run failed the batch's statement (a foreign key), so its items were resent one by one.
    expect(batchErrors.splice(0)).toHaveLength(1);
    const thread404 = (results[2] as PromiseRejectedResult).reason;
    expect(thread404).toBeInstanceOf(NotFoundError);
    expect(String(thread404.message)).toContain(missingThread);
    const run404 = (results[3] as PromiseRejectedResult).reason;
    expect(run404).toBeInstanceOf(NotFoundError);
    expect(String(run404.message)).toContain(missingRun);
    const rows = await rowsOf(thread.id);
    expect(rows.map((row) => [row.message_id, Number(row.sequence)])).toEqual([
      ['m1', 1],
      ['m2', 2],
      ['m4', 3],
    ]);
    const [threadRow] = await database.admin.query<{ next_sequence: string }>(
      'select next_sequence from agent_thread where id = $1',
      [thread.id],
    );
    expect(Number(threadRow!.next_sequence)).toBe(3);
  });

  it('should batch each tenant on its own, under its own tenant, when tenants append at once', async () => {
    const shared = history({ maxInFlight: 1 });
    const [one, two] = [shared.forTenant(randomUUID()), shared.forTenant(randomUUID())];
    const [threadOne, threadTwo] = [await one.createThread(), await two.createThread()];
    await Promise.all(
      range(1, 10).flatMap((index) => [
        one.appendMessage(threadOne.id, userMessage(`one-${index}`)),
        two.appendMessage(threadTwo.id, userMessage(`two-${index}`)),
      ]),
    );
    const [rowsOne, rowsTwo] = [await rowsOf(threadOne.id), await rowsOf(threadTwo.id)];
    expect(rowsOne.map((row) => Number(row.sequence))).toEqual(range(1, 10));
    expect(rowsTwo.map((row) => Number(row.sequence))).toEqual(range(1, 10));
    expect(new Set(rowsOne.map((row) => row.tenant_id))).toEqual(new Set([one.tenantId]));
    expect(new Set(rowsTwo.map((row) => row.tenant_id))).toEqual(new Set([two.tenantId]));
    // No statement mixed the tenants: no transaction wrote rows of both.
    const transactionsOne = new Set(rowsOne.map((row) => row.tx));
    expect(rowsTwo.some((row) => transactionsOne.has(row.tx))).toBe(false);
    // A tenant cannot append to another tenant's thread through a batch either.
    const crossed = await Promise.allSettled([
      one.appendMessage(threadOne.id, userMessage('own')),
      one.appendMessage(threadTwo.id, userMessage('foreign')),
      one.appendMessage(threadOne.id, userMessage('own-2')),
    ]);
    expect(crossed.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((crossed[1] as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
    expect((await rowsOf(threadTwo.id)).map((row) => row.message_id)).not.toContain('foreign');
  });

  it("should append a user-scoped store's bursts in transactions of its own user scope, never to another user's thread", async () => {
    const shared = history({ maxInFlight: 1 });
    const tenantId = randomUUID();
    const [alice, bob] = [
      shared.forTenant(tenantId, { userId: 'alice' }),
      shared.forTenant(tenantId, { userId: 'bob' }),
    ];
    const [aliceThread, bobThread] = [await alice.createThread(), await bob.createThread()];
    // Interleaved bursts of the two users, and alice trying bob's thread in the middle of hers.
    const results = await Promise.allSettled(
      range(1, 10).flatMap((index) => [
        alice.appendMessage(aliceThread.id, userMessage(`alice-${index}`)),
        bob.appendMessage(bobThread.id, userMessage(`bob-${index}`)),
        ...(index === 5 ? [alice.appendMessage(bobThread.id, userMessage('alice-in-bob'))] : []),
      ]),
    );
    const rejected = results.filter((result) => result.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
    const [aliceRows, bobRows] = [await rowsOf(aliceThread.id), await rowsOf(bobThread.id)];
    // Concurrent appends of one thread, each in its own transaction: gapless, every one once, in commit order.
    expect(aliceRows.map((row) => Number(row.sequence))).toEqual(range(1, 10));
    expect(aliceRows.map((row) => row.message_id).sort()).toEqual(
      range(1, 10)
        .map((index) => `alice-${index}`)
        .sort(),
    );
    expect(bobRows.map((row) => Number(row.sequence))).toEqual(range(1, 10));
    expect(bobRows.map((row) => row.message_id).sort()).toEqual(
      range(1, 10)
        .map((index) => `bob-${index}`)
        .sort(),
    );
    const aliceTransactions = new Set(aliceRows.map((row) => row.tx));
    expect(bobRows.some((row) => aliceTransactions.has(row.tx))).toBe(false);
    const [owners] = await database.admin.query<{ users: string[] }>(
      'select array_agg(distinct user_id) as users from agent_message where thread_id = $1',
      [aliceThread.id],
    );
    expect(owners!.users).toEqual(['alice']);
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

  it('should not batch when the database handle is a transaction (a failed batch would abort it)', async () => {
    const tenantId = randomUUID();
    const thread = await history().forTenant(tenantId).createThread();
    batchErrors.length = 0;
    await expect(
      database.db.transaction(async (tx) => {
        const store = createAgentHistory({
          db: tx,
          appendBatching: { maxInFlight: 1 },
          _internal: { onAppendBatchError: (error) => batchErrors.push(error) },
        }).forTenant(tenantId);
        await Promise.all([
          store.appendMessage(thread.id, userMessage('t1')),
          store.appendMessage(thread.id, userMessage('t2')),
          store.appendMessage(thread.id, userMessage('t3'), { runId: randomUUID() }),
        ]);
      }),
    ).rejects.toThrow();
    // No batch statement was tried: with one, the missing run would have failed it.
    expect(batchErrors).toEqual([]);
    expect(await rowsOf(thread.id)).toEqual([]);
  });

  it('should reject bad batching options with a typed error naming the value', () => {
    for (const [options, argument] of [
      [{ maxInFlight: 0 }, 'appendBatching.maxInFlight'],
      [{ maxBatchSize: 1.5 }, 'appendBatching.maxBatchSize'],
      [{ maxBatchBytes: '4MB' }, 'appendBatching.maxBatchBytes'],
      [{ stalledAfterMs: -1 }, 'appendBatching.stalledAfterMs'],
      ['yes', 'appendBatching'],
    ] as const) {
      let thrown: unknown;
      try {
        createAgentHistory({ db: database.db, appendBatching: options as never });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as Error).message).toContain(argument);
      expect((thrown as Error).message).toContain(
        JSON.stringify(Object.values(typeof options === 'object' ? options : { options })[0]),
      );
    }
  });

  if (backend === 'postgres') {
    it('should keep two append statements in flight by default on a server, and one with maxInFlight: 1', async () => {
      for (const [appendBatching, settles] of [
        [undefined, true],
        [{ maxInFlight: 1 }, false],
      ] as const) {
        const store = history(appendBatching).forTenant(randomUUID());
        const [held, free] = [await store.createThread(), await store.createThread()];
        let waiting: Promise<{ created: boolean }> | undefined;
        let freeAppend: Promise<{ created: boolean }> | undefined;
        await whileAnotherWriterHolds([held.id], async () => {
          waiting = store.appendMessage(held.id, userMessage('h1'));
          await waitUntil('an append waiting on a lock', async () => (await appendsWaitingOnLocks()) === 1);
          freeAppend = store.appendMessage(free.id, userMessage('f1'));
          const outcome = await within(
            settles ? SETTLE_TIMEOUT_MS : 1_000,
            freeAppend.then(() => 'settled'),
          );
          expect([appendBatching, outcome]).toEqual([appendBatching, settles ? 'settled' : 'timed out']);
        });
        expect([(await waiting!).created, (await freeAppend!).created]).toEqual([true, true]);
      }
    });

    it('should keep at most one statement per thread in flight, so a free slot never sends a second one for a busy thread', async () => {
      const store = history({ maxInFlight: 2 }).forTenant(randomUUID());
      const [hot, other] = [await store.createThread(), await store.createThread()];
      const appends: Array<Promise<unknown>> = [];
      await whileAnotherWriterHolds([hot.id], async () => {
        appends.push(store.appendMessage(hot.id, userMessage('h1')));
        await waitUntil('an append waiting on a lock', async () => (await appendsWaitingOnLocks()) === 1);
        appends.push(...range(2, 10).map((index) => store.appendMessage(hot.id, userMessage(`h${index}`))));
        // o1 takes the free slot; h2..h10 wait for h1 although the slot is free again once o1 is answered.
        await store.appendMessage(other.id, userMessage('o1'));
        // A second statement for the hot thread, sent by mistake, would be waiting on the lock well within this pause.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await appendsWaitingOnLocks()).toBe(1);
        expect(await rowsOf(hot.id)).toEqual([]);
      });
      await Promise.all(appends);
      expect(await transactionsOf(hot.id)).toBe(2);
      expect((await rowsOf(hot.id)).map((row) => row.message_id)).toEqual(range(1, 10).map((index) => `h${index}`));
    });

    it('should not deadlock when two processes batch appends to the same threads in opposite orders', async () => {
      const tenantId = randomUUID();
      const [first, second] = [
        history({ maxInFlight: 1 }).forTenant(tenantId),
        history({ maxInFlight: 1 }).forTenant(tenantId),
      ];
      const threads = await Promise.all(range(1, 8).map(() => first.createThread()));
      batchErrors.length = 0;
      for (const round of range(1, 25)) {
        await Promise.all([
          ...threads.map((thread) => first.appendMessage(thread.id, userMessage(`first-${round}-${thread.id}`))),
          ...[...threads]
            .reverse()
            .map((thread) => second.appendMessage(thread.id, userMessage(`second-${round}-${thread.id}`))),
        ]);
      }
      for (const thread of threads)
        expect((await rowsOf(thread.id)).map((row) => Number(row.sequence))).toEqual(range(1, 50));
      // A deadlock would have failed a batch with 40P01 (and been hidden by the resend): none did. A batch that
      // found a thread busy (55P03, NOWAIT) was resent split by thread.
      expect(batchErrors.map((error) => postgresErrorCode(error)).filter((code) => code !== '55P03')).toEqual([]);
    });

    it('should not hold appends to a free thread behind a thread another writer holds, when both are in one batch', async () => {
      const store = history({ maxInFlight: 1 }).forTenant(randomUUID());
      const [free, busy] = [await store.createThread(), await store.createThread()];
      let busyAppend: Promise<{ created: boolean }> | undefined;
      await whileAnotherWriterHolds([busy.id], async () => {
        batchErrors.length = 0;
        // Made in one turn, the two leave as one batch of two threads.
        busyAppend = store.appendMessage(busy.id, userMessage('b1'));
        const freeAppend = store.appendMessage(free.id, userMessage('f1'));
        // Settles while the busy thread is still locked.
        expect(
          await within(
            SETTLE_TIMEOUT_MS,
            freeAppend.then((result) => result.created),
          ),
        ).toBe(true);
        expect(batchErrors.map((error) => postgresErrorCode(error))).toEqual(['55P03']);
      });
      expect((await busyAppend!).created).toBe(true);
      expect((await rowsOf(busy.id)).map((row) => row.message_id)).toEqual(['b1']);
    });

    it('should not hold appends to free threads behind statements that wait on threads another writer holds', async () => {
      const store = createAgentHistory({
        db: database.db,
        appendBatching: { maxInFlight: 2, stalledAfterMs: 100 },
      }).forTenant(randomUUID());
      const [held1, held2, free] = [await store.createThread(), await store.createThread(), await store.createThread()];
      const waiting: Array<Promise<{ created: boolean; stored: { sequence: number } }>> = [];
      await whileAnotherWriterHolds([held1.id, held2.id], async () => {
        // Both slots go to appends that wait on the other writer's locks.
        waiting.push(
          store.appendMessage(held1.id, userMessage('h1')),
          store.appendMessage(held2.id, userMessage('h2')),
        );
        await waitUntil('two appends waiting on locks', async () => (await appendsWaitingOnLocks()) === 2);
        // Settles while both are still waiting: their slots were given up after 100 ms.
        expect(
          await within(
            SETTLE_TIMEOUT_MS,
            store.appendMessage(free.id, userMessage('f1')).then((result) => result.created),
          ),
        ).toBe(true);
        expect((await rowsOf(held1.id)).length + (await rowsOf(held2.id)).length).toBe(0);
      });
      const results = await Promise.all(waiting);
      expect(results.map((result) => [result.created, result.stored.sequence])).toEqual([
        [true, 1],
        [true, 1],
      ]);
    });

    it('should let at most maxInFlight statements give up their slot, so appends never take more than twice that many connections', async () => {
      const store = createAgentHistory({
        db: database.db,
        appendBatching: { maxInFlight: 1, stalledAfterMs: 100 },
      }).forTenant(randomUUID());
      const [held1, held2, free] = [await store.createThread(), await store.createThread(), await store.createThread()];
      const waiting: Array<Promise<{ created: boolean }>> = [];
      let freeAppend: Promise<{ created: boolean }> | undefined;
      await whileAnotherWriterHolds([held1.id, held2.id], async () => {
        waiting.push(store.appendMessage(held1.id, userMessage('h1')));
        await waitUntil('an append waiting on a lock', async () => (await appendsWaitingOnLocks()) === 1);
        // The first gave up its slot (the one allowed); the second keeps it while it waits.
        waiting.push(store.appendMessage(held2.id, userMessage('h2')));
        await waitUntil('two appends waiting on locks', async () => (await appendsWaitingOnLocks()) === 2);
        freeAppend = store.appendMessage(free.id, userMessage('f1'));
        expect(
          await within(
            1_000,
            freeAppend.then(() => 'settled'),
          ),
        ).toBe('timed out');
        expect(await rowsOf(free.id)).toEqual([]);
      });
      expect((await freeAppend!).created).toBe(true);
      expect((await Promise.all(waiting)).map((result) => result.created)).toEqual([true, true]);
    });

    it('should give one row to a message two processes append at once in batches, the later batch finding it stored', async () => {
      const tenantId = randomUUID();
      const [first, second] = [
        history({ maxInFlight: 1 }).forTenant(tenantId),
        history({ maxInFlight: 1 }).forTenant(tenantId),
      ];
      const thread = await first.createThread();
      let calls: Array<Promise<Awaited<ReturnType<typeof first.appendMessage>>>> = [];
      await whileAnotherWriterHolds([thread.id], async () => {
        batchErrors.length = 0;
        calls = [first, second].flatMap((store, process) => [
          store.appendMessage(thread.id, userMessage('same', 'hello')),
          store.appendMessage(thread.id, userMessage(`own-${process}`)),
        ]);
        // Both batches ([same, own-N]) wait on the thread row, before their idempotency look-up.
        await waitUntil('two appends waiting on locks', async () => (await appendsWaitingOnLocks()) === 2);
      });
      const results = await Promise.all(calls);
      const same = [results[0]!, results[2]!];
      expect(same.filter((result) => result.created)).toHaveLength(1);
      expect(same[0]!.stored.rowId).toBe(same[1]!.stored.rowId);
      expect([results[1]!.created, results[3]!.created]).toEqual([true, true]);
      // The later batch looked up after the earlier one committed: it found `same` and rolled nothing back.
      expect(batchErrors.map((error) => postgresErrorCode(error))).toEqual([]);
      const rows = await rowsOf(thread.id);
      expect(rows.map((row) => Number(row.sequence))).toEqual([1, 2, 3]);
      expect(rows.map((row) => row.message_id).sort()).toEqual(['own-0', 'own-1', 'same']);
    });

    // postgres-js 3.4.x answers the statement after one that failed mid-result with leading holes before its rows
    // (porsager/postgres#1181). A division by zero at the 4th row of a query leaves three.
    const failAfterThreeRows = (client: postgres.Sql) =>
      client`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch(() => 'failed');
    const thisConnection = async (appendBatching: AppendBatchingOptions | false) => {
      const client = postgres(database.appUrl!, { max: 1, onnotice: () => {} });
      const store = createAgentHistory({ db: drizzle({ client }) as never, appendBatching }).forTenant(randomUUID());
      return { client, store, thread: await store.createThread() };
    };

    it('should store and answer a lone append on a connection whose previous statement failed after sending rows', async () => {
      const { client, store, thread } = await thisConnection(false);
      try {
        expect(await failAfterThreeRows(client)).toBe('failed');
        // The driver's answer really has holes (this line fails once the driver is fixed: the test then proves less).
        expect(Object.keys(await client`select x from generate_series(1, 2) x`)).toEqual(['3', '4']);
        expect(await failAfterThreeRows(client)).toBe('failed');
        const result = await store.appendMessage(thread.id, userMessage('after-the-failure'));
        expect([result.created, result.stored.sequence, result.stored.message.id]).toEqual([
          true,
          1,
          'after-the-failure',
        ]);
        expect((await rowsOf(thread.id)).map((row) => row.message_id)).toEqual(['after-the-failure']);
        // Reads run in a transaction, whose BEGIN resets the driver's counter.
        expect(await failAfterThreeRows(client)).toBe('failed');
        expect((await store.listMessages(thread.id)).messages.map((stored) => stored.message.id)).toEqual([
          'after-the-failure',
        ]);
      } finally {
        await client.end();
      }
    });

    it('should answer each caller of a batch sent on a connection whose previous statement failed after sending rows', async () => {
      const { client, store, thread } = await thisConnection({ maxInFlight: 1, stalledAfterMs: 600_000 });
      const other = await store.createThread();
      try {
        batchErrors.length = 0;
        let calls: Array<ReturnType<typeof store.appendMessage>> = [];
        await whileAnotherWriterHolds([other.id], async () => {
          // The lone append waits on the lock, so the failing query and then the batch queue behind it, in that order.
          calls = [store.appendMessage(other.id, userMessage('alone'))];
          await waitUntil('an append waiting on a lock', async () => (await appendsWaitingOnLocks()) === 1);
          void failAfterThreeRows(client);
          calls.push(
            store.appendMessage(thread.id, userMessage('b1')),
            store.appendMessage(thread.id, userMessage('b2')),
          );
          // An append reaches the batcher's queue after a few microtasks (validation, the loaded token counter), so
          // both are queued once the event loop turns.
          await new Promise((resolve) => setImmediate(resolve));
        });
        const results = await Promise.all(calls);
        // Stored once, by the batch, and each caller told its own new row (a resend would answer created: false).
        expect(results.map((result) => [result.stored.message.id, result.created, result.stored.sequence])).toEqual([
          ['alone', true, 1],
          ['b1', true, 1],
          ['b2', true, 2],
        ]);
        expect(await transactionsOf(thread.id)).toBe(1);
        expect(batchErrors).toEqual([]);
      } finally {
        await client.end();
      }
    });
  }
});

/** What `promise` settles to, or 'timed out' after `milliseconds`. */
function within<VALUE>(milliseconds: number, promise: Promise<VALUE>): Promise<VALUE | 'timed out'> {
  return Promise.race([
    promise,
    new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), milliseconds)),
  ]);
}
