import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, VersionConflictError, type TenantHistory } from '../../src/index.js';
import { APP_LOGIN } from '../support/global-setup.js';
import { BACKENDS, describeOffCitus, itOffCitus, useTestDatabase } from '../support/test-database.js';
import { range, userMessage } from '../support/fixtures.js';
import { waitUntil } from '../support/time-limits.js';

// On PostgreSQL 15 these calls really run at once on up to 40 pooled connections. PGlite runs one transaction at
// a time, so there the same tests check the logic only; the races themselves exist on the real server alone.
const POOL_SIZE = 40;
const settle = <RESULT>(calls: Array<Promise<RESULT>>) => Promise.allSettled(calls);
class RollBack extends Error {}
const fulfilled = <RESULT>(results: Array<PromiseSettledResult<RESULT>>) => {
  const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (rejected) throw rejected.reason;
  return results.map((result) => (result as PromiseFulfilledResult<RESULT>).value);
};

describe.each(BACKENDS)('concurrent writes on %s', (backend) => {
  const database = useTestDatabase(backend, { poolSize: POOL_SIZE });

  const store = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());
  /** The same tenant as seen from another process: its own store, so its appends are never batched with ours. */
  const otherProcess = (tenant: TenantHistory) => createAgentHistory({ db: database.db }).forTenant(tenant.tenantId);

  /**
   * On PostgreSQL: runs `hold` in a superuser transaction, launches the calls, waits until `waiters` of them are
   * blocked on the locks it holds, then rolls back, so the calls really collide. On PGlite: just runs the calls.
   */
  async function collide<RESULT>(
    hold: (session: postgres.TransactionSql) => Promise<unknown>,
    waiters: number,
    launch: () => Array<Promise<RESULT>>,
  ) {
    if (backend === 'pglite') return settle(launch());
    const session = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    let calls: Promise<Array<PromiseSettledResult<RESULT>>> | undefined;
    try {
      await session
        .begin(async (tx) => {
          await hold(tx);
          let ended = false;
          calls = settle(launch());
          void calls.then(() => (ended = true));
          await waitUntil(`${waiters} calls blocked on the held locks`, async () => {
            const [row] = await database.admin.query<{ n: string }>(
              `select count(*) as n from pg_stat_activity where datname = current_database() and usename = $1 and wait_event_type = 'Lock'`,
              [APP_LOGIN],
            );
            if (Number(row!.n) >= waiters) return true;
            if (ended) throw new Error(`the calls ended with only ${row!.n} of ${waiters} blocked`);
            return false;
          });
          throw new RollBack();
        })
        .catch((error: unknown) => {
          if (!(error instanceof RollBack)) throw error;
        });
    } finally {
      await session.end();
    }
    return calls!;
  }
  const sequencesOf = async (threadId: string) => {
    const rows = await database.admin.query<{ sequence: string }>(
      'select sequence from agent_message where thread_id = $1 order by sequence',
      [threadId],
    );
    return rows.map((row) => Number(row.sequence));
  };
  const nextSequenceOf = async (threadId: string) => {
    const [row] = await database.admin.query<{ next_sequence: string }>(
      'select next_sequence from agent_thread where id = $1',
      [threadId],
    );
    return Number(row!.next_sequence);
  };

  describe('appendMessage', () => {
    it('should give 32 concurrent appenders on one thread the sequences 1..N exactly, each appender in its own order', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const perAppender = 5;
      const byAppender = await Promise.all(
        range(1, 32).map(async (appender) => {
          const sequences: number[] = [];
          for (const index of range(1, perAppender)) {
            sequences.push(
              (await tenant.appendMessage(thread.id, userMessage(`w${appender}-${index}`))).stored.sequence,
            );
          }
          return sequences;
        }),
      );
      const total = 32 * perAppender;
      expect(byAppender.flat().sort((a, b) => a - b)).toEqual(range(1, total));
      for (const sequences of byAppender) expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
      expect(await sequencesOf(thread.id)).toEqual(range(1, total));
      expect(await nextSequenceOf(thread.id)).toBe(total);
      // Every stored row is the message its caller was told about.
      const rows = await database.admin.query<{ message_id: string; sequence: string }>(
        'select message_id, sequence from agent_message where thread_id = $1',
        [thread.id],
      );
      const told = new Map(
        byAppender.flatMap((sequences, appender) =>
          sequences.map((sequence, index) => [`w${appender + 1}-${index + 1}`, sequence] as const),
        ),
      );
      expect(new Map(rows.map((row) => [row.message_id, Number(row.sequence)]))).toEqual(told);
    });

    it('should keep 50 threads appended in parallel each gapless and unique', async () => {
      const tenant = store();
      const threads = await Promise.all(range(1, 50).map(() => tenant.createThread()));
      await Promise.all(
        threads.flatMap((thread) =>
          [1, 2].map(async (appender) => {
            for (const index of [1, 2, 3]) await tenant.appendMessage(thread.id, userMessage(`w${appender}-${index}`));
          }),
        ),
      );
      const rows = await database.admin.query<{ thread_id: string; sequences: string[]; next_sequence: string }>(
        `select m.thread_id, array_agg(m.sequence::text order by m.sequence) as sequences, t.next_sequence
         from agent_message m join agent_thread t on t.tenant_id = m.tenant_id and t.id = m.thread_id
         where m.tenant_id = $1 group by m.thread_id, t.next_sequence`,
        [tenant.tenantId],
      );
      expect(rows).toHaveLength(50);
      for (const row of rows) expect([row.sequences.map(Number), Number(row.next_sequence)]).toEqual([range(1, 6), 6]);
    });

    itOffCitus(
      'should store one row for 20 racing requests with the same message id, all callers getting its sequence, with no gap',
      async () => {
        const tenant = store();
        const thread = await tenant.createThread();
        // All 30 calls pass their lookup while the thread row is locked, then queue on it: 19 lose at the unique index.
        const results = fulfilled(
          await collide(
            (tx) => tx`select 1 from agent_thread where id = ${thread.id} for update`,
            30,
            () => [
              ...range(1, 10).map((index) =>
                otherProcess(tenant).appendMessage(thread.id, userMessage(`other-${index}`)),
              ),
              ...range(1, 20).map(() => otherProcess(tenant).appendMessage(thread.id, userMessage('same-id', 'hello'))),
            ],
          ),
        );
        const [otherResults, racingResults] = [results.slice(0, 10), results.slice(10)];
        const stored = await database.admin.query<{ id: string; sequence: string }>(
          `select id, sequence from agent_message where thread_id = $1 and message_id = 'same-id'`,
          [thread.id],
        );
        expect(stored).toHaveLength(1);
        expect(racingResults.filter((result) => result.created)).toHaveLength(1);
        expect(new Set(racingResults.map((result) => `${result.stored.rowId}@${result.stored.sequence}`))).toEqual(
          new Set([`${stored[0]!.id}@${stored[0]!.sequence}`]),
        );
        expect(racingResults.every((result) => result.stored.message.id === 'same-id')).toBe(true);
        expect(otherResults.every((result) => result.created)).toBe(true);
        expect(await sequencesOf(thread.id)).toEqual(range(1, 11));
        expect(await nextSequenceOf(thread.id)).toBe(11);
      },
    );

    itOffCitus('should store one row for 20 racing requests with the same client request id', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const racing = fulfilled(
        await collide(
          (tx) => tx`select 1 from agent_thread where id = ${thread.id} for update`,
          20,
          () =>
            range(1, 20).map((index) =>
              otherProcess(tenant).appendMessage(thread.id, userMessage(`attempt-${index}`, 'hello'), {
                clientRequestId: 'request-1',
              }),
            ),
        ),
      );
      const stored = await database.admin.query<{ message_id: string; sequence: string }>(
        'select message_id, sequence from agent_message where thread_id = $1',
        [thread.id],
      );
      expect(stored).toHaveLength(1);
      expect(Number(stored[0]!.sequence)).toBe(1);
      expect(racing.filter((result) => result.created)).toHaveLength(1);
      expect(new Set(racing.map((result) => `${result.stored.message.id}@${result.stored.sequence}`))).toEqual(
        new Set([`${stored[0]!.message_id}@1`]),
      );
      expect(await nextSequenceOf(thread.id)).toBe(1);
    });
  });

  describeOffCitus('writeSnapshot', () => {
    it('should let exactly one of 10 writers with the same expected version win, and never overwrite', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      for (const index of range(1, 5)) await tenant.appendMessage(thread.id, userMessage(`m${index}`));
      const winners: string[] = [];
      for (const expectedVersion of range(0, 4)) {
        // An uncommitted row of the same version makes all 10 writers read the same state and wait at the
        // unique index; when it rolls back, one writer inserts and the other nine collide with it.
        const placeholder = (tx: postgres.TransactionSql) =>
          tx`insert into agent_context_snapshot (tenant_id, thread_id, version, through_sequence, included_sequences, policy_version, messages_hash)
             values (${tenant.tenantId}, ${thread.id}, ${expectedVersion + 1}, 0, '[]', 'p', 'placeholder')`;
        const results = await collide(placeholder, 10, () =>
          range(1, 10).map((writer) =>
            tenant.writeSnapshot(thread.id, {
              expectedVersion,
              throughSequence: expectedVersion + 1,
              includedSequences: [5],
              policyVersion: 'p1',
              messagesHash: `v${expectedVersion + 1}-writer-${writer}`,
            }),
          ),
        );
        const won = results.filter((result) => result.status === 'fulfilled');
        const lost = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
        expect([won.length, lost.length]).toEqual([1, 9]);
        expect(
          lost.every(
            (result) =>
              result.reason instanceof VersionConflictError && result.reason.expectedVersion === expectedVersion,
          ),
        ).toBe(true);
        const snapshot = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<TenantHistory['writeSnapshot']>>>).value;
        expect(snapshot.version).toBe(expectedVersion + 1);
        winners.push(snapshot.messagesHash);
      }
      const rows = await database.admin.query<{ version: number; messages_hash: string }>(
        'select version, messages_hash from agent_context_snapshot where thread_id = $1 order by version',
        [thread.id],
      );
      expect(rows).toEqual(winners.map((messagesHash, index) => ({ version: index + 1, messages_hash: messagesHash })));
      const stale = await tenant
        .writeSnapshot(thread.id, {
          expectedVersion: 2,
          throughSequence: 5,
          includedSequences: [],
          policyVersion: 'p1',
          messagesHash: 'late',
        })
        .catch((error: unknown) => error);
      expect(stale).toBeInstanceOf(VersionConflictError);
      expect((stale as VersionConflictError).message).toBe(
        'Stale snapshot version: expected 2, but the current version is 5.',
      );
      expect((await tenant.loadContext(thread.id)).snapshot?.messagesHash).toBe(winners[4]);
    });
  });

  describe('loadContext', () => {
    it('should read the snapshot, its version and the tail from one state of the thread while appends and snapshots race', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      for (const index of range(1, 4)) await tenant.appendMessage(thread.id, userMessage(`m${index}`));
      const views: Array<Awaited<ReturnType<TenantHistory['loadContext']>>> = [];
      const writers = range(1, 8).map(async (writer) => {
        for (const index of range(1, 12)) await tenant.appendMessage(thread.id, userMessage(`w${writer}-${index}`));
      });
      const snapshotter = (async () => {
        for (const _ of range(1, 12)) {
          const view = await tenant.loadContext(thread.id);
          await tenant
            .writeSnapshot(thread.id, {
              expectedVersion: view.currentVersion,
              throughSequence: view.thread.messageCount,
              includedSequences: [],
              policyVersion: 'p1',
              messagesHash: 'h',
            })
            .catch((error: unknown) => {
              if (!(error instanceof VersionConflictError)) throw error;
            });
        }
      })();
      const readers = range(1, 6).map(async () => {
        for (const _ of range(1, 12)) views.push(await tenant.loadContext(thread.id));
      });
      await Promise.all([...writers, snapshotter, ...readers]);
      expect(views).toHaveLength(72);
      for (const view of views) {
        const boundary = view.snapshot?.throughSequence ?? 0;
        expect([view.tail.map((stored) => stored.sequence), view.currentVersion]).toEqual([
          range(boundary + 1, view.thread.messageCount),
          view.snapshot?.version ?? 0,
        ]);
      }
    });
  });

  describe('exclude and redact racing appends', () => {
    it('should keep sequences gapless, every state change applied once, and a redaction final', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      for (const index of range(1, 10))
        await tenant.appendMessage(thread.id, userMessage(`m${index}`, `old secret ${index}`));
      const appends = range(1, 20).map((index) => tenant.appendMessage(thread.id, userMessage(`n${index}`)));
      const excludes = range(1, 5).map((index) =>
        tenant.excludeMessages(thread.id, [`m${index}`], { reason: 'superseded-by-edit' }),
      );
      const redactions = range(6, 8).map((index) =>
        tenant.redactMessage(thread.id, `m${index}`, { actor: 'admin', reason: 'pii' }),
      );
      // The same message excluded and redacted at once: whichever goes first, it ends redacted.
      const contested: Array<Promise<unknown>> = ['m9', 'm10'].flatMap((id) => [
        tenant.excludeMessages(thread.id, [id], { reason: 'superseded-by-edit' }),
        tenant.redactMessage(thread.id, id, { actor: 'admin', reason: 'pii' }),
      ]);
      const [appended, excluded, redacted, raced] = await Promise.all([
        settle(appends),
        settle(excludes),
        settle(redactions),
        settle(contested),
      ]);
      expect([...appended, ...excluded, ...redacted].every((result) => result.status === 'fulfilled')).toBe(true);
      const contestedExcludes = [raced[0]!, raced[2]!];
      for (const result of contestedExcludes) {
        if (result.status === 'rejected') {
          expect(result.reason).toBeInstanceOf(InvalidArgumentError);
          expect((result.reason as InvalidArgumentError).message).toMatch(/the message is redacted\.$/);
        }
      }
      expect([raced[1]!.status, raced[3]!.status]).toEqual(['fulfilled', 'fulfilled']);

      expect(await sequencesOf(thread.id)).toEqual(range(1, 30));
      expect(await nextSequenceOf(thread.id)).toBe(30);
      const rows = await database.admin.query<{
        message_id: string;
        context_state: string;
        exclusion_reason: string | null;
        content_version: number;
        parts: unknown;
      }>(
        'select message_id, context_state, exclusion_reason, content_version, parts from agent_message where thread_id = $1 order by sequence',
        [thread.id],
      );
      const state = Object.fromEntries(
        rows.map((row) => [row.message_id, [row.context_state, row.exclusion_reason, row.content_version]]),
      );
      for (const index of range(1, 5)) expect(state[`m${index}`]).toEqual(['excluded', 'superseded-by-edit', 1]);
      for (const index of range(6, 10)) expect(state[`m${index}`]).toEqual(['redacted', null, 2]);
      for (const index of range(1, 20)) expect(state[`n${index}`]).toEqual(['eligible', null, 1]);
      expect(
        rows.filter((row) => JSON.stringify(row.parts).includes('old secret')).map((row) => row.message_id),
      ).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
      const audit = await database.admin.query<{ action: string; n: string }>(
        'select action, count(*) as n from agent_audit_event where thread_id = $1 group by action order by action',
        [thread.id],
      );
      const contestedExcluded = contestedExcludes.filter((result) => result.status === 'fulfilled').length;
      expect(audit.map((row) => [row.action, Number(row.n)])).toEqual([
        ['message-excluded', 5 + contestedExcluded],
        ['message-redacted', 5],
      ]);
    });
  });
});
