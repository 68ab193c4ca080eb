import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planNodes, type PlanNode } from '../support/nested-plans.js';
import { BACKENDS, itOffCitus, useTestDatabase } from '../support/test-database.js';

// The batch append is set-based (one look-up, one thread UPDATE per thread, one INSERT), not a call of the single
// append per item. The rule it must keep: a batch gives every item exactly what the single
// append would have given it, called once per item in the batch's order, and leaves the same rows behind. Generated
// batches over two identical sets of threads (one gets the batch, the other the single calls): repeated message ids
// and client request ids (against stored rows, and within the batch, which takes the per-item path), several
// threads, a deleted and a missing thread, part counts that are and are not exact, every status, and the thread id
// in every spelling the uuid type reads (a repeat is a repeat whatever the spelling), stored rows soft-deleted or
// redacted.

const ROLE = 'agent_history_app';
const SINGLE_ARGUMENTS =
  '$1::uuid, $2::text, $3::uuid, $4::text, $5::text, $6::agent_message_role, $7::agent_message_status, $8::text::json, ' +
  '$9::text::jsonb, $10::uuid, $11::integer, $12::integer, $13::text, $14::integer[], $15::timestamptz, $16::boolean';

interface Item {
  thread: number; // 0, 1: live threads; 2: deleted; 3: never created
  messageId: string;
  clientRequestId: string | null;
  role: 'user' | 'assistant';
  status: 'completed' | 'streaming' | 'failed';
  text: string;
  tokenCount: number | null;
  partTokenCounts: number[] | null;
  pinned: boolean;
  /** How the batch spells the thread id: as stored, in capitals, in braces, without hyphens (all one uuid). */
  spelling: 0 | 1 | 2 | 3;
}

const SPELLINGS = [
  (id: string) => id,
  (id: string) => id.toUpperCase(),
  (id: string) => `{${id}}`,
  (id: string) => id.replaceAll('-', ''),
];

const itemArbitrary: fc.Arbitrary<Item> = fc
  .record({
    thread: fc.constantFrom(0, 0, 0, 1, 1, 2, 3),
    messageId: fc.constantFrom('m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'),
    clientRequestId: fc.option(fc.constantFrom('r1', 'r2', 'r3', 'm1'), { nil: null, freq: 2 }),
    role: fc.constantFrom('user' as const, 'assistant' as const),
    status: fc.constantFrom('completed' as const, 'streaming' as const, 'failed' as const),
    text: fc.string({ maxLength: 12 }),
    counts: fc.option(fc.array(fc.nat(40), { maxLength: 2 }), { nil: null }),
    countsExact: fc.boolean(),
    pinned: fc.boolean(),
    spelling: fc.constantFrom(0 as const, 0 as const, 1 as const, 2 as const, 3 as const),
  })
  .map(({ counts, countsExact, ...item }) => ({
    ...item,
    tokenCount: counts === null ? null : counts.reduce((sum, count) => sum + count, 0) + (countsExact ? 0 : 1),
    partTokenCounts: counts,
  }));

describe.each(BACKENDS)('the batch append on %s', (backend) => {
  const database = useTestDatabase(backend);
  const query = database.admin.query.bind(database.admin);

  /** Two live threads, a deleted one and a missing id, for a tenant. */
  const createThreads = async (tenantId: string): Promise<string[]> => {
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids.slice(0, 3))
      await query('insert into agent_thread (tenant_id, id) values ($1, $2)', [tenantId, id]);
    await query('update agent_thread set deleted_at = now() where id = $1', [ids[2]]);
    return ids;
  };
  const parts = (item: Item) => [{ type: 'text', text: item.text }];
  const single = (tenantId: string, threadId: string, item: Item) =>
    query(`select * from agent_history_append_message(${SINGLE_ARGUMENTS})`, [
      tenantId,
      ROLE,
      threadId,
      item.messageId,
      item.clientRequestId,
      item.role,
      item.status,
      JSON.stringify(parts(item)),
      '{}',
      null,
      10,
      item.tokenCount,
      item.tokenCount === null ? null : 'counter',
      item.partTokenCounts === null ? null : `{${item.partTokenCounts.join(',')}}`,
      item.status === 'streaming' ? '2030-01-01T00:00:00Z' : null,
      item.pinned,
    ]);
  /** The batch function's items argument (without the parts), as the store builds it, for `items` on `threads`. */
  const itemsJson = (threads: string[], items: Item[]) =>
    JSON.stringify(
      items.map((item) => ({
        threadId: SPELLINGS[item.spelling]!(threads[item.thread]!),
        messageId: item.messageId,
        clientRequestId: item.clientRequestId,
        role: item.role,
        status: item.status,
        metadata: {},
        runId: null,
        byteSize: 10,
        tokenCount: item.tokenCount,
        tokenCounterId: item.tokenCount === null ? null : 'counter',
        partTokenCounts: item.partTokenCounts,
        leaseExpiresAt: item.status === 'streaming' ? '2030-01-01T00:00:00Z' : null,
        pinned: item.pinned,
      })),
    );
  /** The batch function's parts argument: the items' parts, in item order. */
  const partsJson = (items: Item[]) => JSON.stringify(items.map(parts));
  const batch = (tenantId: string, threads: string[], items: Item[]) =>
    query(`select * from agent_history_append_messages($1::uuid, $2::text, $3::text::jsonb, $4::text::json)`, [
      tenantId,
      ROLE,
      itemsJson(threads, items),
      partsJson(items),
    ]);

  /** A result row or a stored row without what differs between the two sets by construction (ids, times). */
  const comparable = (
    row: Record<string, unknown>,
    threads: string[],
  ): Record<string, unknown> & { thread?: number } => {
    const { id: _id, created_at, updated_at, completed_at, thread_id, tenant_id: _tenant, ...rest } = row;
    return {
      ...rest,
      thread: thread_id === undefined ? undefined : threads.indexOf(thread_id as string),
      timesSet: [created_at !== null, updated_at !== null, completed_at !== null],
    };
  };
  const storedRows = async (threads: string[]) =>
    (
      await query(
        `select thread_id, sequence::int, message_id, client_request_id, role::text, status::text, parts, metadata,
           pinned, byte_size, token_count, token_counter_id, part_token_counts, lease_expires_at, completed_at,
           created_at, updated_at, search_vector::text as search_vector, context_state::text
         from agent_message where thread_id = any($1::uuid[]) order by thread_id, sequence`,
        [`{${threads.join(',')}}`],
      )
    )
      .map((row) => comparable(row, threads))
      .sort((a, b) => a.thread! - b.thread! || Number(a.sequence) - Number(b.sequence));
  const threadState = async (threads: string[]) =>
    (
      await query(
        'select id, next_sequence::int, last_message_at is not null as active from agent_thread where id = any($1::uuid[])',
        [`{${threads.join(',')}}`],
      )
    )
      .map(({ id, ...rest }) => ({ thread: threads.indexOf(id as string), ...rest }))
      .sort((a, b) => a.thread - b.thread);

  it('should give every item of a batch what the single append gives it, item by item, and store the same rows', async () => {
    let setBased = 0;
    let perItem = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(itemArbitrary, { maxLength: 5 }),
        fc.array(itemArbitrary, { minLength: 2, maxLength: 10 }),
        fc.subarray(['m1', 'm2', 'm3']),
        fc.subarray(['m4', 'm5', 'm6']),
        async (stored, items, deleted, redacted) => {
          const tenantId = randomUUID();
          const [batched, oneByOne] = [await createThreads(tenantId), await createThreads(tenantId)];
          for (const threads of [batched, oneByOne])
            for (const item of stored) await single(tenantId, threads[item.thread]!, item);
          // Stored rows a retry may hit: soft-deleted ones, and redacted ones (parts emptied).
          await query('update agent_message set deleted_at = now() where tenant_id = $1 and message_id = any($2)', [
            tenantId,
            `{${deleted.join(',')}}`,
          ]);
          await query(
            `update agent_message set redacted_at = now(), parts = '[]' where tenant_id = $1 and message_id = any($2)`,
            [tenantId, `{${redacted.join(',')}}`],
          );

          const batchRows = await batch(tenantId, batched, items);
          const singleRows: Record<string, unknown>[] = [];
          for (const [index, item] of items.entries())
            for (const row of await single(tenantId, oneByOne[item.thread]!, item))
              singleRows.push({ item: index, ...row });

          const byItem = (rows: Record<string, unknown>[], threads: string[]) =>
            rows
              .map((row) => {
                const { part_token_counts: _counts, ...rest } = row; // the batch does not return them
                return comparable(rest, threads);
              })
              .sort((a, b) => (a.item as number) - (b.item as number));
          expect(byItem(batchRows, batched)).toEqual(byItem(singleRows, oneByOne));
          expect(await storedRows(batched)).toEqual(await storedRows(oneByOne));
          expect(await threadState(batched)).toEqual(await threadState(oneByOne));

          const repeats = (key: (item: Item) => string | null) => {
            const keys = items.map((item) => key(item)).filter((value) => value !== null);
            return new Set(keys).size < keys.length;
          };
          if (
            repeats((item) => `${item.thread}/${item.messageId}`) ||
            repeats((item) => item.clientRequestId && `${item.thread}/${item.clientRequestId}`)
          )
            perItem++;
          else setBased++;
        },
      ),
      { numRuns: 100 },
    );
    // Both paths of the function were taken.
    expect(setBased).toBeGreaterThan(5);
    expect(perItem).toBeGreaterThan(5);
  });

  // On Citus the function runs on the tenant's worker, out of the coordinator's auto_explain.
  itOffCitus(
    'should take the set-based path for a batch without repeats: one thread UPDATE per thread, not one per item',
    async () => {
      const tenantId = randomUUID();
      const threads = await createThreads(tenantId);
      const items: Item[] = Array.from({ length: 6 }, (_, index) => ({
        thread: index % 2,
        messageId: `m${index}`,
        clientRequestId: null,
        role: 'user',
        status: 'completed',
        text: `text ${index}`,
        tokenCount: 3,
        partTokenCounts: [3],
        pinned: false,
        spelling: 0,
      }));
      const plans = await database.explainNested(
        `select * from agent_history_append_messages('${tenantId}'::uuid, '${ROLE}'::text, '${itemsJson(threads, items)}'::jsonb, '${partsJson(items)}'::json)`,
      );
      const all = plans.flatMap((plan) => planNodes(plan.Plan)) as Array<PlanNode & { Operation?: string }>;
      const modifying = (operation: string) =>
        all.filter((node) => node['Node Type'] === 'ModifyTable' && node.Operation === operation);
      // One UPDATE of both threads' rows and one INSERT of the six messages (the per-item path runs six of each).
      expect(modifying('Update').map((node) => node['Actual Rows'])).toEqual([2]);
      expect(modifying('Insert').map((node) => node['Actual Rows'])).toEqual([6]);
      const rows = await query<{ thread_id: string; sequence: number }>(
        'select thread_id, sequence::int from agent_message where tenant_id = $1 order by thread_id, sequence',
        [tenantId],
      );
      expect(rows.filter((row) => row.thread_id === threads[0]).map((row) => row.sequence)).toEqual([1, 2, 3]);
      expect(rows.filter((row) => row.thread_id === threads[1]).map((row) => row.sequence)).toEqual([1, 2, 3]);
    },
  );
});
