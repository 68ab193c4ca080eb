// A page read, or a context load's tail, in the caller's transaction (`createAgentHistory({ db: tx })`, and every
// read on Citus) is a Drizzle select rather than the read function. Under row-level security the planner has no
// statistics for the thread (the policy's user clause is not leakproof): it took a thread of 5,000 messages for 50
// and scanned and sorted them all instead of walking the thread's index to the LIMIT. What each statement touched,
// from pg_stat_statements.
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { rowsOf } from '../../src/tenant/database.js';
import { longThread } from '../support/long-thread.js';
import { useTestDatabase } from '../support/test-database.js';

describe('a page read in the caller’s transaction on postgres', () => {
  const database = useTestDatabase('postgres');

  /** Buffers and calls so far of the store's selects ordered by sequence, newest first (pg_stat_statements is in `postgres`). */
  async function pageReads(): Promise<{ blocks: number; calls: number }> {
    const name = new URL(database.adminUrl!).pathname.slice(1);
    const admin = postgres(`${inject('postgresServerUrl')}/postgres`, { max: 1, onnotice: () => {} });
    try {
      const [row] = await admin.unsafe<Array<{ blocks: number; calls: number }>>(
        `select coalesce(sum(s.shared_blks_hit + s.shared_blks_read), 0)::int as blocks,
                coalesce(sum(s.calls), 0)::int as calls
           from pg_stat_statements s join pg_database d on d.oid = s.dbid
          where d.datname = $1 and s.query like '%from "agent_message" where%'
            and s.query like '%order by "agent_message"."sequence" desc limit%'`,
        [name],
      );
      return row!;
    } finally {
      await admin.end();
    }
  }

  it('should walk the thread’s index to the page, and give the transaction its enable_sort back', async () => {
    const { tenantId, thread } = await longThread(database);
    const [{ pages }] = await database.admin.query<{ pages: number }>(
      `select (pg_relation_size('agent_message') / 8192)::int as pages`,
    );
    expect(pages).toBeGreaterThan(60);

    const before = await pageReads();
    const { sequences, sortBefore, sortAfter } = await database.db.transaction(async (tx) => {
      const setting = async () =>
        rowsOf<{ value: string }>(await tx.execute(sql`select current_setting('enable_sort') as value`))[0]!.value;
      const sortBefore = await setting();
      const page = await createAgentHistory({ db: tx }).forTenant(tenantId).listMessages(thread, { limit: 51 });
      return { sequences: page.messages.map((message) => message.sequence), sortBefore, sortAfter: await setting() };
    });
    const after = await pageReads();

    expect(sequences).toEqual(Array.from({ length: 51 }, (_, index) => 5000 - index));
    expect(after.calls - before.calls).toBe(1);
    // The index's path to the page and the page's heap pages: a few, not the table's.
    expect(after.blocks - before.blocks).toBeLessThan(20);
    expect(sortBefore).toBe('on');
    expect(sortAfter).toBe('on');

    // The context load's tail, newest first down to its limit, is the same kind of read.
    const loaded = await pageReads();
    const context = await database.db.transaction((tx) =>
      createAgentHistory({ db: tx }).forTenant(tenantId).loadContext(thread, { maxTailMessages: 51 }),
    );
    const afterLoad = await pageReads();
    expect(context.tail.map((message) => message.sequence)).toEqual(
      Array.from({ length: 51 }, (_, index) => 4950 + index),
    );
    expect(afterLoad.calls - loaded.calls).toBe(1);
    expect(afterLoad.blocks - loaded.blocks).toBeLessThan(20);
  });
});
