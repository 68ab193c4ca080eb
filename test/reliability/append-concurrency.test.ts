import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, VersionConflictError } from '../../src/index.js';
import type { TenantHistory } from '../../src/store/create-agent-history.js';
import type { AppendResult } from '../../src/store/append-message.js';
import { CONTRACT_BACKENDS, ON_CITUS, useTestDatabase } from '../support/test-database.js';
import { seededTally } from './support/reliability-report.js';
import { scaled } from './support/reliability-scale.js';

// On Citus every call pays a coordinator → worker hop, with three servers on the machine's cores (about eight times
// slower per append, README "Running on Citus"): 2,000 appends there still race 24 writers on two hot threads of
// about 600 messages each.
const APPENDS = scaled(ON_CITUS ? 2_000 : 10_000);
const HOT_THREADS = 2;
const COLD_THREADS = 40;
const TENANTS = 4;
const POOL_SIZE = 12;
/** Concurrent appenders (twice the pool) and concurrent readers of the hot threads. */
const WRITERS = 24;
const READERS = 3;
const SNAPSHOT_THREADS = 8;
const SNAPSHOT_WRITERS = 6;
const SNAPSHOT_ROUNDS = scaled(15);
/**
 * The time limits follow the work: per operation, about ten times what one took on the loaded two-core machine
 * (an append about 2.6 ms on PostgreSQL 15, a snapshot write about 4 ms; eight times that on Citus), plus set-up.
 */
const MS_PER_OPERATION = ON_CITUS ? 200 : 25;
const timeLimit = (operations: number) => 60_000 + operations * MS_PER_OPERATION;
/** Snapshot writes: every writer of every thread in each round, then at least two wins each in the free for all. */
const SNAPSHOT_WRITES = SNAPSHOT_THREADS * SNAPSHOT_WRITERS * (SNAPSHOT_ROUNDS + 2);

/** How a job is submitted: once, twice at once, again after its answer, or again under another message id. */
type Submission = 'once' | 'double-submit' | 'retry-after-ack' | 'retry-new-message-id';

interface Job {
  index: number;
  store: TenantHistory;
  threadId: string;
  messageId: string;
  clientRequestId: string | undefined;
  submission: Submission;
  /** When the first submission started and when the first answer came back (performance.now()). */
  startedAt: number;
  ackedAt: number;
  rowId?: string;
  sequence?: number;
}

// PostgreSQL through postgres-js, node-postgres and PgBouncer (transaction mode); PGlite has one connection.
const SERVER_BACKENDS = CONTRACT_BACKENDS.filter((backend) => backend !== 'pglite');

describe.each(SERVER_BACKENDS)('appendMessage under concurrency on %s', (backend) => {
  const database = useTestDatabase(backend, { poolSize: POOL_SIZE });

  it(
    'should lose, duplicate, skip and reorder nothing across hot and cold threads with retries and double submits',
    async () => {
      const { random, tally } = seededTally(`concurrency-appends-${backend}`);
      const history = createAgentHistory({ db: database.db });
      const stores = Array.from({ length: TENANTS }, () => history.forTenant(randomUUID()));
      const hot = await Promise.all(
        Array.from({ length: HOT_THREADS }, (_, index) => stores[index % TENANTS]!.createThread({ title: 'hot' })),
      );
      const cold = await Promise.all(
        Array.from({ length: COLD_THREADS }, (_, index) => stores[index % TENANTS]!.createThread({ title: 'cold' })),
      );
      const storeOf = new Map(
        [...hot, ...cold].map((thread, index) => [
          thread.id,
          stores[(index < HOT_THREADS ? index : index - HOT_THREADS) % TENANTS]!,
        ]),
      );

      const jobs: Job[] = Array.from({ length: APPENDS }, (_, index) => {
        const thread = random.chance(0.6) ? random.pick(hot) : random.pick(cold);
        const roll = random.next();
        const withRequestId = random.chance(0.6);
        const submission: Submission =
          roll < 0.7
            ? 'once'
            : roll < 0.8
              ? 'double-submit'
              : roll < 0.9
                ? 'retry-after-ack'
                : withRequestId
                  ? 'retry-new-message-id'
                  : 'retry-after-ack';
        return {
          index,
          store: storeOf.get(thread.id)!,
          threadId: thread.id,
          messageId: `m-${index}`,
          clientRequestId: withRequestId ? `r-${index}` : undefined,
          submission,
          startedAt: 0,
          ackedAt: 0,
        };
      });

      const submit = (job: Job, messageId = job.messageId) => {
        tally.attempt('append:submission');
        return job.store.appendMessage(
          job.threadId,
          {
            id: messageId,
            role: job.index % 2 ? 'assistant' : 'user',
            parts: [{ type: 'text', text: `message ${job.index}` }],
          },
          { clientRequestId: job.clientRequestId },
        );
      };
      const acknowledge = (job: Job, results: AppendResult[]) => {
        const created = results.filter((result) => result.created).length;
        tally.expect(
          created === 1,
          'a job was created other than exactly once',
          () => `job ${job.index} (${job.submission}): created ${created} times`,
        );
        const rows = new Set(results.map((result) => `${result.stored.rowId}@${result.stored.sequence}`));
        tally.expect(
          rows.size === 1,
          'submissions of one job got different rows',
          () => `job ${job.index}: ${[...rows].join(' ')}`,
        );
        const ids = new Set(results.map((result) => result.stored.message.id));
        tally.expect(
          ids.size === 1 && ids.has(job.messageId),
          'a retry returned another message',
          () => `job ${job.index}: ${[...ids].join(' ')}`,
        );
        job.rowId = results[0]!.stored.rowId;
        job.sequence = results[0]!.stored.sequence;
      };

      const runJob = async (job: Job) => {
        tally.attempt(`append:${job.submission}`);
        job.startedAt = performance.now();
        if (job.submission === 'double-submit') {
          const first = submit(job).then((result) => ((job.ackedAt ||= performance.now()), result));
          await new Promise((resolve) => setTimeout(resolve, random.int(3)));
          const second = submit(job).then((result) => ((job.ackedAt ||= performance.now()), result));
          acknowledge(job, await Promise.all([first, second]));
          return;
        }
        const first = await submit(job);
        job.ackedAt = performance.now();
        if (job.submission === 'once') return acknowledge(job, [first]);
        const retry = await submit(
          job,
          job.submission === 'retry-new-message-id' ? `${job.messageId}-retry` : job.messageId,
        );
        acknowledge(job, [first, retry]);
      };

      // Readers page the hot threads while they grow: a reader must never see a gap (a later sequence
      // committed before an earlier one) and never see a thread shrink.
      let writing = true;
      const read = async () => {
        const newest = new Map<string, number>();
        while (writing) {
          const thread = random.pick(hot);
          const page = await storeOf.get(thread.id)!.listMessages(thread.id, { limit: 200 });
          tally.attempt('read:page-checked');
          const sequences = page.messages.map((message) => message.sequence);
          const contiguous = sequences.every(
            (sequence, index) => index === 0 || sequence === sequences[index - 1]! - 1,
          );
          tally.expect(
            contiguous,
            'a reader saw a gap (commit-order inversion)',
            () => `thread ${thread.id}: ${sequences.slice(0, 20).join(',')}`,
          );
          const top = sequences[0] ?? 0;
          tally.expect(
            top >= (newest.get(thread.id) ?? 0),
            'a reader saw the thread shrink',
            () => `${top} after ${newest.get(thread.id)}`,
          );
          newest.set(thread.id, top);
          tally.expect(
            page.messages.every((message) => message.status === 'completed'),
            'a reader saw a message in an unexpected status',
            () => thread.id,
          );
        }
      };

      const queue = [...jobs];
      const work = async () => {
        for (let job = queue.shift(); job; job = queue.shift()) {
          try {
            await runJob(job);
          } catch (error) {
            tally.violation('an append failed', `job ${job.index}: ${(error as Error).message}`);
          }
        }
      };
      const readers = Array.from({ length: READERS }, read);
      await Promise.all(Array.from({ length: WRITERS }, work));
      writing = false;
      await Promise.all(readers);

      // The database, read as the superuser: per thread exactly the jobs' messages, sequences 1..n, next_sequence n.
      const jobsByThread = Map.groupBy(jobs, (job) => job.threadId);
      for (const thread of [...hot, ...cold]) {
        const threadJobs = jobsByThread.get(thread.id) ?? [];
        const rows = await database.admin.query<{ sequence: string; message_id: string; id: string }>(
          'select sequence, message_id, id::text from agent_message where thread_id = $1 order by sequence',
          [thread.id],
        );
        const [counter] = await database.admin.query<{ next_sequence: string }>(
          'select next_sequence from agent_thread where id = $1',
          [thread.id],
        );
        const sequences = rows.map((row) => Number(row.sequence));
        tally.expect(
          sequences.every((sequence, index) => sequence === index + 1),
          'sequences are not 1..n',
          () => `thread ${thread.id}: ${sequences.slice(0, 10).join(',')}…`,
        );
        tally.expect(
          Number(counter!.next_sequence) === rows.length,
          'next_sequence differs from the message count',
          () => `${counter!.next_sequence} vs ${rows.length}`,
        );
        const stored = new Map(rows.map((row) => [row.message_id, row]));
        tally.expect(stored.size === rows.length, 'a message id is stored twice', () => thread.id);
        tally.expect(
          rows.length === threadJobs.length,
          'lost or extra messages',
          () => `thread ${thread.id}: ${rows.length} rows for ${threadJobs.length} jobs`,
        );
        for (const job of threadJobs) {
          const row = stored.get(job.messageId);
          if (!tally.expect(row !== undefined, 'an acknowledged append is missing', () => `job ${job.index}`)) continue;
          tally.expect(
            row!.id === job.rowId && Number(row!.sequence) === job.sequence,
            'the acknowledged row differs from the stored one',
            () => `job ${job.index}`,
          );
        }
        // Commit order: a job answered before another started must have the smaller sequence.
        const bySequence = [...threadJobs].sort((a, b) => a.sequence! - b.sequence!);
        let earliestAckAbove = Number.POSITIVE_INFINITY;
        for (let index = bySequence.length - 1; index >= 0; index--) {
          const job = bySequence[index]!;
          tally.expect(
            earliestAckAbove >= job.startedAt,
            'commit-order inversion',
            () => `job ${job.index} (sequence ${job.sequence}) started after a higher sequence was acknowledged`,
          );
          earliestAckAbove = Math.min(earliestAckAbove, job.ackedAt);
        }
      }
      tally.note('hot-thread-messages', hot.map((thread) => (jobsByThread.get(thread.id) ?? []).length).join('+'));
      tally.note('appends', APPENDS);
      tally.record();
      expect(tally.violations).toEqual([]);
      expect(jobs.every((job) => job.sequence !== undefined)).toBe(true);
    },
    timeLimit(APPENDS),
  );

  it(
    'should let exactly one concurrent snapshot writer win each version and give every other a VersionConflictError',
    async () => {
      const { random, tally } = seededTally(`concurrency-snapshots-${backend}`);
      const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
      const threads = await Promise.all(Array.from({ length: SNAPSHOT_THREADS }, () => store.createThread()));
      for (const thread of threads) {
        for (let index = 0; index < 5; index++)
          await store.appendMessage(thread.id, {
            id: `m-${index}`,
            role: 'user',
            parts: [{ type: 'text', text: 'x' }],
          });
      }
      // A boundary at or after the one loaded: boundaries only advance (a lower one is SnapshotBoundaryError).
      const write = (threadId: string, expectedVersion: number, writer: number, floor: number) =>
        store.writeSnapshot(threadId, {
          expectedVersion,
          throughSequence: random.between(floor, 5),
          includedSequences: [5],
          policyVersion: 'reliability-1',
          messagesHash: `writer-${writer}`,
        });

      // Rounds: every writer read the same version and races to write the next one.
      const winners = new Map<string, number[]>();
      for (let round = 0; round < SNAPSHOT_ROUNDS; round++) {
        await Promise.all(
          threads.map(async (thread) => {
            const { currentVersion, snapshot } = await store.loadContext(thread.id);
            const floor = snapshot?.throughSequence ?? 0;
            const outcomes = await Promise.allSettled(
              Array.from({ length: SNAPSHOT_WRITERS }, (_, writer) => write(thread.id, currentVersion, writer, floor)),
            );
            tally.attempt('snapshot:write', outcomes.length);
            const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
            const conflicts = outcomes.filter(
              (outcome) => outcome.status === 'rejected' && outcome.reason instanceof VersionConflictError,
            );
            tally.expect(
              won.length === 1,
              'not exactly one winner for a version',
              () => `thread ${thread.id} version ${currentVersion + 1}: ${won.length} winners`,
            );
            tally.expect(
              conflicts.length === outcomes.length - won.length,
              'a losing writer got something other than VersionConflictError',
              () =>
                outcomes
                  .filter(
                    (outcome) => outcome.status === 'rejected' && !(outcome.reason instanceof VersionConflictError),
                  )
                  .map((outcome) => String((outcome as PromiseRejectedResult).reason))
                  .join('; '),
            );
            for (const outcome of won) {
              const version = (outcome as PromiseFulfilledResult<{ version: number }>).value.version;
              tally.expect(
                version === currentVersion + 1,
                'a winner wrote an unexpected version',
                () => `${version} for expected ${currentVersion}`,
              );
              winners.set(thread.id, [...(winners.get(thread.id) ?? []), version]);
            }
          }),
        );
      }
      // Free for all: writers reload and retry on conflict until each has won twice; versions stay 1..n, each once.
      await Promise.all(
        threads.map(async (thread) => {
          await Promise.all(
            Array.from({ length: SNAPSHOT_WRITERS }, async (_, writer) => {
              for (let wins = 0; wins < 2;) {
                const loaded = await store.loadContext(thread.id);
                tally.attempt('snapshot:write');
                try {
                  const snapshot = await write(
                    thread.id,
                    loaded.currentVersion,
                    writer,
                    loaded.snapshot?.throughSequence ?? 0,
                  );
                  winners.set(thread.id, [...(winners.get(thread.id) ?? []), snapshot.version]);
                  wins++;
                } catch (error) {
                  if (!(error instanceof VersionConflictError))
                    tally.violation('a writer failed with something other than VersionConflictError', String(error));
                  else tally.note('conflicts-retried');
                  if (!(error instanceof VersionConflictError)) return;
                }
              }
            }),
          );
        }),
      );
      for (const thread of threads) {
        const rows = await database.admin.query<{ version: number; through: number }>(
          'select version, through_sequence as through from agent_context_snapshot where thread_id = $1 order by version',
          [thread.id],
        );
        const versions = rows.map((row) => Number(row.version));
        tally.expect(
          rows.every((row, index) => index === 0 || Number(row.through) >= Number(rows[index - 1]!.through)),
          'a snapshot boundary went back',
          () => rows.map((row) => row.through).join(','),
        );
        const won = (winners.get(thread.id) ?? []).sort((a, b) => a - b);
        tally.expect(
          versions.every((version, index) => version === index + 1),
          'snapshot versions are not 1..n',
          () => versions.join(','),
        );
        tally.expect(
          JSON.stringify(versions) === JSON.stringify(won),
          'stored versions differ from the acknowledged wins',
          () => `${versions.length} stored, ${won.length} won`,
        );
      }
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    timeLimit(SNAPSHOT_WRITES),
  );
});
