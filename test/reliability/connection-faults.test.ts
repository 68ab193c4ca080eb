import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseError } from '../../src/index.js';
import { APP_LOGIN } from '../support/global-setup.js';
import { classifyFailure, describeError } from './support/failure-classification.js';
import { tolerateKnownDriverCrashes, withDeadline } from './support/known-driver-faults.js';
import { openReplaceablePool, type ReplaceablePool } from './support/replaceable-pool.js';
import { ReliabilityTally, seededTally } from './support/reliability-report.js';
import { scaled, scaledTimeout } from './support/reliability-scale.js';
import { startRestartableCluster, type RestartableCluster } from './support/restartable-cluster.js';
import { seededRandom, type SeededRandom } from './support/seeded-random.js';
import { SETTLE_TIMEOUT_MS, waitUntil } from '../support/time-limits.js';

const APPENDS_UNDER_KILLS = scaled(1_000);
const FINALIZES_UNDER_KILLS = scaled(200);
const LOCKED_KILLS = scaled(20);
const APPENDS_ACROSS_RESTARTS = scaled(2_000);
const THREADS = 6;
const WORKERS = 12;

const text = (value: string) => [{ type: 'text', text: value }];
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
type Admin = postgres.Sql;

/** Calls that succeeded so far (any label): the killer waits for one between two kills (see `startKiller`). */
let succeededCalls = 0;
/**
 * What a client does with a call the driver lost (CALL_HUNG): its pool may be wedged (postgres-js 3.4.9 can leave a
 * query's promise unsettled when its connection is terminated), so it replaces the pool, as after the driver's known
 * crash. The store's guarantees are checked across the replacement.
 */
let replaceWedgedPool: () => void = () => {};

/**
 * Retries `step` until it succeeds, as a client would after an unclear outcome. Every failure must be a typed
 * error or a recognisable lost connection; anything else is a violation and ends the retries.
 */
async function retrying<RESULT>(
  tally: ReliabilityTally,
  random: SeededRandom,
  label: string,
  step: () => Promise<RESULT>,
  backoffMs = 5,
): Promise<RESULT | undefined> {
  const giveUpAt = Date.now() + 90_000;
  while (Date.now() < giveUpAt) {
    try {
      // The deadline is for a query the driver lost (see withDeadline), far beyond an honest call on a loaded machine.
      const result = await withDeadline(step(), SETTLE_TIMEOUT_MS);
      succeededCalls++;
      return result;
    } catch (error) {
      const kind = classifyFailure(error);
      if (kind === null) {
        tally.violation(`${label} failed with an unclear error`, describeError(error));
        return undefined;
      }
      tally.note(`failure ${kind}`);
      if (kind === 'connection:CALL_HUNG') replaceWedgedPool();
      // CALL_HUNG is this suite's own deadline, and CONNECTION_ENDED / _DESTROYED come from the suite ending a pool it
      // replaces (not retryable on that pool); every other lost connection is the store's retryable DatabaseError.
      if (!['connection:CALL_HUNG', 'connection:CONNECTION_ENDED', 'connection:CONNECTION_DESTROYED'].includes(kind)) {
        tally.expect(
          error instanceof DatabaseError && error.retryable,
          'a lost connection did not reach the caller as a retryable DatabaseError',
          () => `${label}: ${describeError(error)}`,
        );
      }
      tally.attempt(`${label}:retried`);
      await sleep(random.int(backoffMs) + 1);
    }
  }
  tally.violation(`${label} never succeeded`, 'retried for 90 s');
  return undefined;
}

/** Per thread: the stored message ids in sequence order, after checking that sequences are 1..n and match next_sequence. */
async function checkThreads(
  tally: ReliabilityTally,
  admin: Admin,
  threadIds: string[],
): Promise<Map<string, { id: string; sequence: number; status: string; parts: unknown }>> {
  const stored = new Map<string, { id: string; sequence: number; status: string; parts: unknown }>();
  for (const threadId of threadIds) {
    const rows = await admin<{ id: string; sequence: string; message_id: string; status: string; parts: unknown }[]>`
      select id::text, sequence, message_id, status, parts from agent_message where thread_id = ${threadId} order by sequence`;
    const [thread] = await admin<
      { next_sequence: string }[]
    >`select next_sequence from agent_thread where id = ${threadId}`;
    tally.expect(
      rows.every((row, index) => Number(row.sequence) === index + 1),
      'sequences are not gapless',
      () => `thread ${threadId}`,
    );
    tally.expect(
      Number(thread!.next_sequence) === rows.length,
      'next_sequence differs from the message count',
      () => `${thread!.next_sequence} vs ${rows.length}`,
    );
    for (const row of rows) {
      tally.expect(!stored.has(`${threadId}/${row.message_id}`), 'a message is stored twice', () => row.message_id);
      stored.set(`${threadId}/${row.message_id}`, {
        id: row.id,
        sequence: Number(row.sequence),
        status: row.status,
        parts: row.parts,
      });
    }
  }
  return stored;
}

describe('connection and server faults on a private postgres cluster', () => {
  let cluster: RestartableCluster;
  let admin: Admin;
  let pool: ReplaceablePool;
  let driverCrashes = 0;
  let restoreUncaughtHandlers: () => void = () => {};
  /** The store of a tenant on the current pool (the pool is replaced after a driver crash). */
  const storeOf = (tenantId: string) => pool.history.forTenant(tenantId);
  /**
   * Creates a thread as a client would, retrying a lost connection: a test's set-up can meet a pooled connection
   * that the previous test's faults terminated while it sat idle.
   */
  const createThreadRetrying = async (tally: ReliabilityTally, random: SeededRandom, tenantId: string) => {
    const thread = await retrying(tally, random, 'createThread', () => storeOf(tenantId).createThread());
    if (!thread) throw new Error('could not create a thread');
    return thread;
  };
  /** Notes the known driver crashes and pool replacements seen since the last call. */
  let generationNoted = 1;
  const noteDriverCrashes = (tally: ReliabilityTally) => {
    if (driverCrashes > 0) tally.note('driver uncaught TypeError in nextWrite (porsager/postgres#1154)', driverCrashes);
    if (pool.generation > generationNoted)
      tally.note('pool replaced after a driver crash', pool.generation - generationNoted);
    driverCrashes = 0;
    generationNoted = pool.generation;
  };
  beforeAll(async () => {
    replaceWedgedPool = () => pool?.replace();
    restoreUncaughtHandlers = tolerateKnownDriverCrashes(() => {
      driverCrashes++;
      pool?.replace();
    });
    cluster = await startRestartableCluster();
    admin = postgres(cluster.adminUrl, { max: 2, onnotice: () => {} });
    pool = openReplaceablePool(cluster.appUrl);
  });
  afterAll(async () => {
    await pool?.end();
    await admin?.end({ timeout: 1 });
    await cluster?.destroy();
    restoreUncaughtHandlers();
  });

  /**
   * Terminates app backends of the database that are not idle (mid-statement or mid-transaction) until stopped,
   * every 50-150 ms but never twice without a call succeeding in between: the fault rate follows the store's progress,
   * so a loaded machine, where every statement runs longer and is more often caught, cannot starve the retries.
   */
  const startKiller = (tally: ReliabilityTally, random: SeededRandom) => {
    let running = true;
    const done = (async () => {
      let succeededAtLastKill = -1;
      while (running) {
        await sleep(random.between(50, 150));
        if (succeededCalls === succeededAtLastKill) continue;
        const killed = await admin<{ killed: boolean }[]>`
          select pg_terminate_backend(pid) as killed from pg_stat_activity
          where usename = ${APP_LOGIN} and datname = current_database() and state <> 'idle' and pid <> pg_backend_pid()
          order by random() limit 1`;
        if (killed.length > 0) {
          tally.attempt('fault:backend-terminated');
          succeededAtLastKill = succeededCalls;
        }
      }
    })();
    return async () => {
      running = false;
      await done;
    };
  };

  it(
    'should keep appends and finalizes whole and gapless while backends are terminated at random, and retries succeed idempotently',
    async () => {
      const { random, tally } = seededTally('faults-killed-connections-postgres');
      const tenantId = randomUUID();
      const threads = await Promise.all(
        Array.from({ length: THREADS }, () => createThreadRetrying(tally, random, tenantId)),
      );
      const threadIds = threads.map((thread) => thread.id);
      const acked = new Map<string, { rowId: string; sequence: number; created: boolean }>();
      const finalParts = (index: number) => [
        { type: 'step-start' },
        { type: 'text', text: `final answer ${index}`, state: 'done' },
      ];

      type Job = () => Promise<void>;
      const jobs: Job[] = [];
      for (let index = 0; index < APPENDS_UNDER_KILLS; index++) {
        const threadId = random.pick(threadIds);
        jobs.push(async () => {
          tally.attempt('append');
          let attempts = 0;
          const result = await retrying(tally, random, 'append', () => {
            attempts++;
            return storeOf(tenantId).appendMessage(
              threadId,
              { id: `m-${index}`, role: 'user', parts: text(`message ${index}`) },
              { clientRequestId: `r-${index}` },
            );
          });
          if (!result) return;
          // A retry that finds its row: the first attempt committed but its answer was lost with the connection.
          if (attempts > 1 && !result.created) tally.note('commit-survived-lost-answer');
          acked.set(`${threadId}/m-${index}`, {
            rowId: result.stored.rowId,
            sequence: result.stored.sequence,
            created: result.created,
          });
        });
      }
      const finalized = new Map<string, number>();
      for (let index = 0; index < FINALIZES_UNDER_KILLS; index++) {
        const threadId = random.pick(threadIds);
        const messageId = `a-${index}`;
        jobs.push(async () => {
          tally.attempt('assistant-lifecycle');
          const begun = await retrying(tally, random, 'begin', () =>
            storeOf(tenantId).beginAssistantMessage(threadId, { messageId, clientRequestId: `ra-${index}` }),
          );
          if (!begun) return;
          acked.set(`${threadId}/${messageId}`, {
            rowId: begun.stored.rowId,
            sequence: begun.stored.sequence,
            created: true,
          });
          for (let checkpoint = 1; checkpoint <= 2; checkpoint++) {
            const parts = [
              { type: 'step-start' },
              { type: 'text', text: `partial ${index}.${checkpoint}`, state: 'streaming' },
            ];
            if (
              !(await retrying(tally, random, 'checkpoint', () =>
                storeOf(tenantId).checkpointMessage(threadId, messageId, { parts }),
              ))
            )
              return;
          }
          const stored = await retrying(tally, random, 'finalize', () =>
            storeOf(tenantId).finalizeMessage(threadId, messageId, { status: 'completed', parts: finalParts(index) }),
          );
          if (!stored) return;
          tally.expect(
            stored.status === 'completed' && isDeepStrictEqual(stored.message.parts, finalParts(index)),
            'finalize returned another state',
            () => `${messageId}: ${stored.status}`,
          );
          finalized.set(`${threadId}/${messageId}`, index);
        });
      }
      // Shuffle so appends and lifecycles interleave on the same threads.
      for (let index = jobs.length - 1; index > 0; index--) {
        const other = random.int(index + 1);
        [jobs[index], jobs[other]] = [jobs[other]!, jobs[index]!];
      }
      const stopKiller = startKiller(tally, random);
      const queue = [...jobs];
      await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          for (let job = queue.shift(); job; job = queue.shift()) await job();
        }),
      );
      await stopKiller();

      const stored = await checkThreads(tally, admin, threadIds);
      tally.expect(
        stored.size === acked.size,
        'lost or extra messages',
        () => `${stored.size} stored, ${acked.size} acknowledged`,
      );
      for (const [key, ack] of acked) {
        const row = stored.get(key);
        if (!tally.expect(row !== undefined, 'an acknowledged message is missing', () => key)) continue;
        tally.expect(
          row!.id === ack.rowId && row!.sequence === ack.sequence,
          'the acknowledged row differs from the stored one',
          () => key,
        );
      }
      for (const [key, index] of finalized) {
        const row = stored.get(key)!;
        tally.expect(
          row.status === 'completed' && isDeepStrictEqual(row.parts, finalParts(index)),
          'a finalized message is partial',
          () => `${key}: ${row.status} ${JSON.stringify(row.parts)}`,
        );
      }
      const unfinished = [...stored.values()].filter((row) => row.status === 'pending' || row.status === 'streaming');
      tally.expect(unfinished.length === 0, 'a message was left unfinished', () => `${unfinished.length} rows`);
      noteDriverCrashes(tally);
      tally.record();
      expect(tally.violations).toEqual([]);
      expect(tally.attempts.get('fault:backend-terminated') ?? 0).toBeGreaterThan(0);
    },
    scaledTimeout(90_000),
  );

  it(
    'should leave nothing behind when the backend is terminated while an append or a finalize waits on a lock',
    async () => {
      const random = seededRandom();
      const tally = new ReliabilityTally('faults-killed-while-locked-postgres');
      const tenantId = randomUUID();
      const store = () => storeOf(tenantId);
      const thread = await createThreadRetrying(tally, random, tenantId);
      /**
       * Holds a row lock as the superuser, starts `call`, terminates its backend once it waits, and returns its
       * outcome. A call that fails before it waits (its pooled connection was terminated by an earlier kill while
       * idle) is started again, as a client would retry it: the wait ends with the call, not with a clock.
       *
       * A failed attempt can leave its statement waiting on the server: a pool replaced after the driver's crash
       * closes its sockets, and a backend waiting on a lock does not notice that its client is gone. Such a backend
       * would commit the attempt once the lock is released, as a lost answer does, so every backend of the app login
       * waiting on the lock is terminated. More than one waiting backend is a violation unless an earlier attempt
       * failed.
       */
      const killWhileWaiting = async (lockSql: string, lockParams: string[], call: () => Promise<unknown>) => {
        const holder = await admin.reserve();
        try {
          await holder`begin`;
          await holder.unsafe(lockSql, lockParams);
          const waiters = async () =>
            (
              await admin<{ pid: number }[]>`
                select pid from pg_stat_activity where usename = ${APP_LOGIN} and datname = current_database() and wait_event_type = 'Lock'`
            ).map((row) => row.pid);
          for (let restarts = 0; ; restarts++) {
            let settled = false;
            const pending = call().then(
              () => ({ ok: true as const }),
              (error: unknown) => ({ ok: false as const, error }),
            );
            void pending.finally(() => (settled = true));
            const waiting = await waitUntil('the call to wait on the held lock', async () => {
              if (settled) return 'settled' as const;
              const pids = await waiters();
              return pids.length > 0 ? pids : undefined;
            });
            if (waiting === 'settled') {
              const outcome = await pending;
              // Succeeded without waiting (the caller reports it), or failed with an error no retry helps.
              if (outcome.ok || classifyFailure(outcome.error) === null) return outcome;
              tally.note('call failed before it waited, started again');
              continue;
            }
            // Terminates every waiter, then any that starts waiting before the call settles (a statement the driver
            // lost is given up on at the deadline, as everywhere in this suite).
            const deadline = Date.now() + SETTLE_TIMEOUT_MS;
            const terminated: number[] = [];
            for (let pids = waiting; pids.length > 0;) {
              for (const pid of pids) await admin`select pg_terminate_backend(${pid})`;
              terminated.push(...pids);
              pids = [];
              while (!settled && pids.length === 0 && Date.now() < deadline) {
                await sleep(10);
                // A terminated backend is listed until it has exited: only a new one counts.
                if (!settled) pids = (await waiters()).filter((pid) => !terminated.includes(pid));
              }
            }
            tally.expect(restarts > 0 || terminated.length === 1, 'one call waited on the lock from two backends', () =>
              JSON.stringify(terminated),
            );
            if (terminated.length > 1) tally.note('an earlier attempt still waited on the server, terminated');
            tally.attempt('fault:backend-terminated-while-waiting');
            return await withDeadline(pending, Math.max(1, deadline - Date.now())).catch((error: unknown) => ({
              ok: false as const,
              error,
            }));
          }
        } finally {
          await holder`rollback`;
          holder.release();
        }
      };

      for (let round = 0; round < LOCKED_KILLS; round++) {
        const [before] = await admin<{ next_sequence: string; count: string }[]>`
          select next_sequence, (select count(*) from agent_message where thread_id = ${thread.id}) as count from agent_thread where id = ${thread.id}`;
        const message = { id: `m-${round}`, role: 'user' as const, parts: text(`message ${round}`) };
        const outcome = await killWhileWaiting('select 1 from agent_thread where id = $1 for update', [thread.id], () =>
          store().appendMessage(thread.id, message, { clientRequestId: `r-${round}` }),
        );
        tally.expect(
          !outcome.ok && classifyFailure(outcome.error) !== null,
          'a killed append did not fail clearly',
          () => (outcome.ok ? 'it succeeded' : describeError(outcome.error)),
        );
        const [after] = await admin<{ next_sequence: string; count: string }[]>`
          select next_sequence, (select count(*) from agent_message where thread_id = ${thread.id}) as count from agent_thread where id = ${thread.id}`;
        tally.expect(
          after!.next_sequence === before!.next_sequence && after!.count === before!.count,
          'a killed append left a row or a sequence bump',
          () => `${JSON.stringify(before)} -> ${JSON.stringify(after)}`,
        );
        // Retried as a client would (the pool may still hold a connection the kill left behind); a retry whose
        // commit survived a lost answer gets the stored row back, so "once" is checked on the rows themselves.
        const retried = await retrying(tally, random, 'append', () =>
          store().appendMessage(thread.id, message, { clientRequestId: `r-${round}` }),
        );
        const [appended] = await admin<
          { count: string }[]
        >`select count(*) as count from agent_message where thread_id = ${thread.id}`;
        tally.expect(
          retried?.stored.sequence === Number(before!.next_sequence) + 1 &&
            Number(appended!.count) === Number(before!.count) + 1,
          'the retry after a killed append did not append once',
          () => `${retried?.created} ${retried?.stored.sequence} rows ${before!.count} -> ${appended!.count}`,
        );

        const messageId = `a-${round}`;
        await retrying(tally, random, 'begin', () => store().beginAssistantMessage(thread.id, { messageId }));
        const partial = [{ type: 'text', text: `partial ${round}`, state: 'streaming' }];
        await retrying(tally, random, 'checkpoint', () =>
          store().checkpointMessage(thread.id, messageId, { parts: partial }),
        );
        const [checkpointed] = await admin<
          { row: string }[]
        >`select m::text as row from agent_message m where thread_id = ${thread.id} and message_id = ${messageId}`;
        const final = [{ type: 'text', text: `final ${round} ${random.word(6)}`, state: 'done' }];
        const killed = await killWhileWaiting(
          'select 1 from agent_message where thread_id = $1 and message_id = $2 for update',
          [thread.id, messageId],
          () => store().finalizeMessage(thread.id, messageId, { status: 'completed', parts: final }),
        );
        tally.expect(
          !killed.ok && classifyFailure(killed.error) !== null,
          'a killed finalize did not fail clearly',
          () => (killed.ok ? 'it succeeded' : describeError(killed.error)),
        );
        const [untouched] = await admin<
          { row: string }[]
        >`select m::text as row from agent_message m where thread_id = ${thread.id} and message_id = ${messageId}`;
        tally.expect(untouched!.row === checkpointed!.row, 'a killed finalize changed the row', () => untouched!.row);
        const first = (await retrying(tally, random, 'finalize', () =>
          store().finalizeMessage(thread.id, messageId, { status: 'completed', parts: final }),
        ))!;
        const again = (await retrying(tally, random, 'finalize', () =>
          store().finalizeMessage(thread.id, messageId, { status: 'completed', parts: final }),
        ))!;
        tally.expect(
          first.status === 'completed' && isDeepStrictEqual(first.message.parts, final),
          'the retried finalize did not store the answer',
          () => first.status,
        );
        tally.expect(
          again.updatedAt.getTime() === first.updatedAt.getTime(),
          'a second finalize rewrote the message',
          () => `${first.updatedAt.toISOString()} -> ${again.updatedAt.toISOString()}`,
        );
      }
      await checkThreads(tally, admin, [thread.id]);
      noteDriverCrashes(tally);
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    scaledTimeout(60_000),
  );

  it(
    'should lose no acknowledged append and leave no gap when the server is stopped and crashed under load',
    async () => {
      const { random, tally } = seededTally('faults-server-restart-postgres');
      const tenantId = randomUUID();
      const threads = await Promise.all(
        Array.from({ length: THREADS }, () => createThreadRetrying(tally, random, tenantId)),
      );
      const threadIds = threads.map((thread) => thread.id);
      const acked = new Map<string, { rowId: string; sequence: number }>();
      const queue = Array.from({ length: APPENDS_ACROSS_RESTARTS }, (_, index) => ({
        index,
        threadId: random.pick(threadIds),
      }));
      let workersDone = false;
      const workers = Promise.all(
        Array.from({ length: WORKERS }, async () => {
          for (let job = queue.shift(); job; job = queue.shift()) {
            const { index, threadId } = job;
            tally.attempt('append');
            const result = await retrying(
              tally,
              random,
              'append',
              () =>
                storeOf(tenantId).appendMessage(
                  threadId,
                  { id: `m-${index}`, role: 'user', parts: text(`message ${index}`) },
                  { clientRequestId: `r-${index}` },
                ),
              50,
            );
            if (result)
              acked.set(`${threadId}/m-${index}`, { rowId: result.stored.rowId, sequence: result.stored.sequence });
          }
        }),
      ).finally(() => (workersDone = true));
      for (const [share, mode] of [
        [0.25, 'immediate'],
        [0.5, 'fast'],
        [0.75, 'immediate'],
      ] as const) {
        // Bounded by the work: the workers either acknowledge appends or end (each retry gives up after 90 s).
        await waitUntil(
          `${share * 100} % of the appends acknowledged`,
          () => acked.size >= APPENDS_ACROSS_RESTARTS * share || workersDone,
          { timeoutMs: scaledTimeout(120_000) },
        );
        if (acked.size < APPENDS_ACROSS_RESTARTS * share) break; // the workers ended early: the checks below say why
        tally.attempt(`fault:server-stop-${mode}`);
        const ackedBeforeStop = new Map(acked);
        await cluster.stop(mode);
        await sleep(200);
        await cluster.start();
        // Everything acknowledged before the stop must have survived it.
        const keys = [...ackedBeforeStop.keys()];
        const survivors = await admin<{ key: string }[]>`
          select thread_id::text || '/' || message_id as key from agent_message where thread_id = any(${threadIds}::uuid[])`;
        const present = new Set(survivors.map((row) => row.key));
        const lost = keys.filter((key) => !present.has(key));
        tally.expect(lost.length === 0, `acknowledged appends lost across a ${mode} stop`, () =>
          lost.slice(0, 5).join(', '),
        );
      }
      await workers;
      const stored = await checkThreads(tally, admin, threadIds);
      tally.expect(
        acked.size === APPENDS_ACROSS_RESTARTS,
        'not every append was eventually acknowledged',
        () => `${acked.size} of ${APPENDS_ACROSS_RESTARTS}`,
      );
      tally.expect(
        stored.size === acked.size,
        'lost or extra messages',
        () => `${stored.size} stored, ${acked.size} acknowledged`,
      );
      for (const [key, ack] of acked) {
        const row = stored.get(key);
        tally.expect(
          row !== undefined && row.id === ack.rowId && row.sequence === ack.sequence,
          'an acknowledged append is missing or moved',
          () => key,
        );
      }
      noteDriverCrashes(tally);
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    scaledTimeout(120_000),
  );
});
