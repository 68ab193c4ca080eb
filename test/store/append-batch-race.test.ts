import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { describe, expect } from 'vitest';
import { itOffCitus, useTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/time-limits.js';

// The batch append looks up every item's message id and request id in one statement. A writer that
// holds the thread (its append not yet committed) makes that statement wait at the thread's UPDATE, after its
// look-up's snapshot was taken: a retried message the writer then commits was not seen, and the batch's INSERT hit
// the unique index (23505) where a per-item loop, whose later look-ups are statements of their own, returned the
// stored row. Only PostgreSQL runs two transactions at once.

const ROLE = 'agent_history_app';
const CALL = `select * from agent_history_append_messages($1::uuid, $2::text, $3::text::jsonb, $4::text::json)`;
/** The batch's parts argument: the items' parts, in item order. */
const partsOf = (items: Array<{ parts: unknown }>) => JSON.stringify(items.map((item) => item.parts));

describe('the batch append racing another writer on postgres', () => {
  const database = useTestDatabase('postgres');

  const single = (messageId: string, clientRequestId: string | null) => ({
    threadId: '',
    messageId,
    clientRequestId,
    role: 'user',
    status: 'completed',
    parts: [{ type: 'text', text: messageId }],
    metadata: {},
    runId: null,
    byteSize: 10,
    tokenCount: null,
    tokenCounterId: null,
    partTokenCounts: null,
    leaseExpiresAt: null,
    pinned: false,
  });

  /**
   * Another session appends `held` to a fresh thread and keeps its transaction open until the batch of `items` waits
   * for it, then commits. Returns the batch's rows.
   */
  async function raceWith(held: ReturnType<typeof single>, items: Array<ReturnType<typeof single>>) {
    const tenantId = randomUUID();
    const threadId = randomUUID();
    await database.admin.query('insert into agent_thread (tenant_id, id) values ($1, $2)', [tenantId, threadId]);
    const session = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    const batcher = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    try {
      let batch: Promise<Array<Record<string, unknown>>> | undefined;
      await session.begin(async (tx) => {
        await tx.unsafe(CALL, [tenantId, ROLE, JSON.stringify([{ ...held, threadId }]), partsOf([held])]);
        batch = batcher.unsafe(CALL, [
          tenantId,
          ROLE,
          JSON.stringify(items.map((item) => ({ ...item, threadId }))),
          partsOf(items),
        ]) as unknown as Promise<Array<Record<string, unknown>>>;
        batch.catch(() => {}); // awaited below
        let batchEnded = false;
        void batch.finally(() => (batchEnded = true)).catch(() => {});
        await waitUntil('the batch to wait for the thread', async () => {
          if (batchEnded) throw new Error('the batch ended without waiting for the thread');
          const [row] = await database.admin.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock' and query like '%append_messages%'`,
          );
          return row!.n > 0;
        });
      });
      const rows = await batch!;
      const stored = await database.admin.query<{ message_id: string; sequence: number }>(
        'select message_id, sequence::int from agent_message where thread_id = $1 order by sequence',
        [threadId],
      );
      return { rows: [...rows].sort((a, b) => Number(a.item) - Number(b.item)), stored };
    } finally {
      await session.end();
      await batcher.end();
    }
  }

  itOffCitus('should return the row a writer it waited for committed with the same message id', async () => {
    const { rows, stored } = await raceWith(single('m2', null), [single('m1', null), single('m2', null)]);
    expect(rows.map((row) => [row.item, row.inserted, row.message_id, Number(row.sequence)])).toEqual([
      [0, true, 'm1', 2],
      [1, false, 'm2', 1],
    ]);
    expect(stored).toEqual([
      { message_id: 'm2', sequence: 1 },
      { message_id: 'm1', sequence: 2 },
    ]);
  });

  itOffCitus('should return the row a writer it waited for committed with the same request id', async () => {
    const { rows, stored } = await raceWith(single('w1', 'r1'), [single('m1', null), single('m2', 'r1')]);
    expect(rows.map((row) => [row.item, row.inserted, row.message_id, Number(row.sequence)])).toEqual([
      [0, true, 'm1', 2],
      [1, false, 'w1', 1],
    ]);
    expect(stored.map((row) => row.message_id)).toEqual(['w1', 'm1']);
  });
  itOffCitus('should not wait for a writer under repeatable read when every item is stored already', async () => {
    const tenantId = randomUUID();
    const threadId = randomUUID();
    await database.admin.query('insert into agent_thread (tenant_id, id) values ($1, $2)', [tenantId, threadId]);
    const stored = [single('m1', null), single('m2', null)];
    const items = JSON.stringify(stored.map((item) => ({ ...item, threadId })));
    await database.admin.query(CALL, [tenantId, ROLE, items, partsOf(stored)]);
    const session = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    const batcher = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    try {
      await session.begin(async (tx) => {
        await tx.unsafe(CALL, [
          tenantId,
          ROLE,
          JSON.stringify([{ ...single('w1', null), threadId }]),
          partsOf([single('w1', null)]),
        ]);
        // The per-item loop only looks these up: it neither waits for the thread nor fails to serialize.
        // (A wait would last until the session ends: the lock timeout turns it into an error.)
        const rows = await batcher.begin('isolation level repeatable read', async (batch) => {
          await batch.unsafe(`set local lock_timeout = '5s'`);
          return batch.unsafe(CALL, [tenantId, ROLE, items, partsOf(stored)]);
        });
        expect(rows.map((row) => [row.item, row.inserted, row.message_id])).toEqual([
          [0, false, 'm1'],
          [1, false, 'm2'],
        ]);
      });
    } finally {
      await session.end();
      await batcher.end();
    }
  });
});
