import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

// The batch append's rule: every item gets what the per-item loop gives it, which calls the single append with
// `(item->>'key')::type` for each argument and the item's element of the parts array as its parts. The set-based path
// reads the items another way; these batches hold items as the JSON the function accepts, not only as the store
// writes them (thread ids in any form the uuid type reads, JSON nulls, part counts of every JSON type), and compare
// the batch with one single append per item, called with exactly the loop's argument expressions: the same rows, the
// same stored state, or the same error. Also as a user-scoped transaction would call it (`app.user_id` set): another
// user's thread and messages are out of reach.

const ROLE = 'agent_history_app';
const BATCH = 'select * from agent_history_append_messages($1::uuid, $2::text, $3::text::jsonb, $4::text::json)';
/** The per-item call, with the item as $3 and its parts (JSON text, or null past the parts array's end) as $4. */
const PER_ITEM = `select * from agent_history_append_message($1::uuid, $2::text,
  (($3::text::jsonb)->>'threadId')::uuid, ($3::text::jsonb)->>'messageId', ($3::text::jsonb)->>'clientRequestId',
  (($3::text::jsonb)->>'role')::agent_message_role, (($3::text::jsonb)->>'status')::agent_message_status, $4::text::json,
  ($3::text::jsonb)->'metadata', (($3::text::jsonb)->>'runId')::uuid, (($3::text::jsonb)->>'byteSize')::integer,
  (($3::text::jsonb)->>'tokenCount')::integer, ($3::text::jsonb)->>'tokenCounterId',
  CASE WHEN jsonb_typeof(($3::text::jsonb)->'partTokenCounts') = 'array' THEN ARRAY(
    SELECT (c.value #>> '{}')::integer FROM jsonb_array_elements(($3::text::jsonb)->'partTokenCounts') WITH ORDINALITY c
    ORDER BY c.ordinality) END,
  (($3::text::jsonb)->>'leaseExpiresAt')::timestamptz, (($3::text::jsonb)->>'pinned')::boolean)`;

type Raw = Record<string, unknown>;
/** An item as the batch's items argument takes it: without its parts, which go in the parts array. */
const withoutParts = (raw: Raw): Raw => {
  if (typeof raw !== 'object' || raw === null) return raw;
  const { parts: _parts, ...rest } = raw;
  return rest;
};
/** An item's element of the parts array (JSON null for an item that has none). */
const partsOf = (raw: Raw): unknown => (typeof raw === 'object' && raw !== null ? (raw.parts ?? null) : null);
/** An item in the store's form on thread `thread` (a placeholder the test replaces), with `changes` applied. */
const item = (messageId: string, changes: Raw = {}): Raw => ({
  threadId: 'T0',
  messageId,
  clientRequestId: null,
  role: 'user',
  status: 'completed',
  parts: [{ type: 'text', text: `text of ${messageId}` }],
  metadata: {},
  runId: null,
  byteSize: 10,
  tokenCount: 3,
  tokenCounterId: 'counter',
  partTokenCounts: [3],
  leaseExpiresAt: null,
  pinned: false,
  ...changes,
});
const upper = (id: string) => id.toUpperCase();
const braced = (id: string) => `{${id}}`;
const bare = (id: string) => id.replaceAll('-', '');

/** Batches by name; a thread id is `T0` or `T1`, or a function of thread 0's id (another spelling of it). */
const CASES: Record<string, Raw[]> = {
  'a repeated message id, the thread spelled in capitals': [item('m1'), item('m1', { threadId: upper })],
  'a repeated request id, the thread in braces': [
    item('m1', { clientRequestId: 'r1' }),
    item('m2', { clientRequestId: 'r1', threadId: braced }),
  ],
  'a repeated message id, the thread without hyphens, on two threads': [
    item('m1'),
    item('x1', { threadId: 'T1' }),
    item('m1', { threadId: bare }),
  ],
  'a nested part-count list': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: [[1], [2]] })],
  'part counts as array text': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: '{1,2}' })],
  'part counts as a number': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: 3 })],
  'part counts as an object': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: { a: 3 } })],
  'part counts as strings': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: ['1', '2'] })],
  'part counts with a null': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: [3, null] })],
  'part counts with a fraction': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: [1.5, 1.5] })],
  'part counts of integer-valued floats': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: [1.0, 2.0] })],
  'a negative part count': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: [-1, 4] })],
  'a part count out of range': [item('m1'), item('m2', { tokenCount: 3, partTokenCounts: [2147483648] })],
  'part counts that are booleans': [item('m1'), item('m2', { tokenCount: 1, partTokenCounts: [true] })],
  'JSON null metadata': [item('m1'), item('m2', { metadata: null })],
  'JSON null parts': [item('m1'), item('m2', { parts: null })],
  'a numeric message id': [item('m1'), item(1.5 as never)],
  'numbers as strings': [item('m1'), item('m2', { byteSize: '10', tokenCount: '3', pinned: 'yes' })],
  'a fractional byte size': [item('m1'), item('m2', { byteSize: 10.5 })],
  'an item that is not an object': [item('m1'), 5 as never],
  'an invalid status on a missing thread': [item('m1'), item('m2', { threadId: 'T2', status: 'bogus' })],
};

/**
 * Batches appended as Alice in a user-scoped transaction (`app.user_id`): thread 0 is hers, thread 1 Bob's, which
 * holds a message `mb` (a message's user is its thread's: a foreign key).
 */
const USER_CASES: Record<string, Raw[]> = {
  "an item on another user's thread": [item('m1'), item('m2', { threadId: 'T1' })],
  "a message id another user's thread holds": [item('m1'), item('mb', { threadId: 'T1' })],
};
/** A statement run with `app.user_id` set for its own transaction, before the function call that depends on it. */
const asAlice = (call: string) =>
  `select a.* from (select set_config('app.user_id', 'alice', true) as u) s cross join lateral ` +
  call.replace('select * from ', '').replace('$1::uuid', `($1::text || left(s.u, 0))::uuid`) +
  ' a';

describe.each(BACKENDS)('the batch append with raw JSON items on %s', (backend) => {
  const database = useTestDatabase(backend);
  const query = database.admin.query.bind(database.admin);

  /** Two live threads and a missing id for a fresh tenant; the items with their thread ids filled in. */
  const setUp = async (items: Raw[], scoped: boolean) => {
    const tenantId = randomUUID();
    const threads = [randomUUID(), randomUUID(), randomUUID()];
    for (const [index, id] of threads.slice(0, 2).entries())
      await query('insert into agent_thread (tenant_id, id, user_id) values ($1, $2, $3)', [
        tenantId,
        id,
        scoped ? ['alice', 'bob'][index] : null,
      ]);
    if (scoped) {
      await query('update agent_thread set next_sequence = 1 where id = $1', [threads[1]]);
      await query(
        `insert into agent_message (tenant_id, thread_id, user_id, sequence, message_id, role, parts)
         values ($1, $2, 'bob', 1, 'mb', 'user', '[]')`,
        [tenantId, threads[1]],
      );
    }
    const resolve = (raw: Raw): Raw => {
      if (typeof raw !== 'object' || raw === null) return raw;
      const thread = raw.threadId;
      const threadId =
        typeof thread === 'function'
          ? (thread as (id: string) => string)(threads[0]!)
          : threads[Number(String(thread).slice(1))];
      return { ...raw, threadId };
    };
    return { tenantId, threads, items: items.map(resolve) };
  };
  const outcome = async (
    run: () => Promise<Record<string, unknown>[]>,
  ): Promise<
    { rows: Record<string, unknown>[]; error?: undefined } | { rows?: undefined; error: string | undefined }
  > => {
    try {
      return { rows: await run() };
    } catch (error) {
      return { error: postgresErrorCode(error) };
    }
  };
  /** Rows without what differs between two tenants by construction. */
  const comparable = (rows: Record<string, unknown>[], threads: string[]): Record<string, unknown>[] =>
    rows.map(
      ({ id: _id, created_at, updated_at, completed_at, thread_id, tenant_id: _t, part_token_counts, ...rest }) => ({
        ...rest,
        ...(thread_id === undefined ? {} : { thread: threads.indexOf(thread_id as string) }),
        ...(part_token_counts === undefined ? {} : { part_token_counts }),
        timesSet: [created_at !== null, updated_at !== null, completed_at !== null],
      }),
    );
  const stored = async (tenantId: string, threads: string[]) => ({
    messages: comparable(
      await query(
        `select thread_id, sequence::int, message_id, client_request_id, role::text, status::text, parts, metadata,
           pinned, byte_size, token_count, part_token_counts, search_vector::text as search_vector
         from agent_message where tenant_id = $1 order by thread_id, sequence`,
        [tenantId],
      ),
      threads,
    ).sort((a, b) => Number(a.thread) - Number(b.thread) || Number(a.sequence) - Number(b.sequence)),
    threads: (
      await query<{ id: string; next_sequence: number }>(
        'select id, next_sequence::int from agent_thread where tenant_id = $1',
        [tenantId],
      )
    )
      .map(({ id, next_sequence }) => [threads.indexOf(id), next_sequence])
      .sort(),
  });

  it.each([
    ...Object.entries(CASES).map(([name, raw]) => [name, raw, false] as const),
    ...Object.entries(USER_CASES).map(([name, raw]) => [`${name}, user-scoped`, raw, true] as const),
  ])('should treat %s as the per-item loop does', async (_name, raw, scoped) => {
    const scope = (call: string) => (scoped ? asAlice(call) : call);
    const batched = await setUp(raw, scoped);
    const oneByOne = await setUp(raw, scoped);
    const batch = await outcome(() =>
      query(scope(BATCH), [
        batched.tenantId,
        ROLE,
        JSON.stringify(batched.items.map(withoutParts)),
        JSON.stringify(batched.items.map(partsOf)),
      ]),
    );
    // The loop stops at the first error and the batch rolls back: compare the error alone.
    const single: { rows?: Record<string, unknown>[]; error?: string } = { rows: [] };
    for (const [index, one] of oneByOne.items.entries()) {
      const result = await outcome(() =>
        query(scope(PER_ITEM), [
          oneByOne.tenantId,
          ROLE,
          JSON.stringify(withoutParts(one)),
          JSON.stringify(partsOf(one)),
        ]),
      );
      if (result.rows === undefined) {
        Object.assign(single, { rows: undefined, error: result.error ?? 'not a database error' });
        break;
      }
      single.rows!.push(...result.rows.map((row) => ({ item: index, ...row })));
    }
    if (single.error !== undefined) {
      expect(batch).toEqual({ error: single.error });
      return;
    }
    const byItem = (rows: Record<string, unknown>[], threads: string[]) =>
      comparable(rows, threads)
        .map(({ part_token_counts: _counts, ...row }) => row) // the batch does not return them
        .sort((a, b) => Number(a.item) - Number(b.item));
    expect(batch.error).toBeUndefined();
    // Bob's thread (item 1 of every user-scoped case) is out of Alice's scope: no row, stored or new.
    if (scoped) expect(batch.rows!.map((row) => row.item)).toEqual([0]);
    expect(byItem(batch.rows!, batched.threads)).toEqual(byItem(single.rows!, oneByOne.threads));
    expect(await stored(batched.tenantId, batched.threads)).toEqual(await stored(oneByOne.tenantId, oneByOne.threads));
  });

  it('should give an item past the end of the parts array null parts: refused when new, returned when stored', async () => {
    const { tenantId, items } = await setUp([item('m1'), item('m2')], false);
    const [stored, fresh] = items.map(withoutParts);
    await query(PER_ITEM, [tenantId, ROLE, JSON.stringify(stored), JSON.stringify(partsOf(items[0]!))]);
    // Both paths alike: the single append given null parts refuses a new message (NOT NULL) and returns a stored one.
    for (const call of [
      () => query(BATCH, [tenantId, ROLE, JSON.stringify([stored, fresh]), '[]']),
      () => query(PER_ITEM, [tenantId, ROLE, JSON.stringify(fresh), null]),
    ])
      expect(await outcome(call)).toEqual({ error: '23502' });
    const returned = (rows: Record<string, unknown>[]) => rows.map((row) => [row.inserted, row.message_id, row.parts]);
    const expected = [[false, 'm1', [{ type: 'text', text: 'text of m1' }]]];
    expect(returned(await query(BATCH, [tenantId, ROLE, JSON.stringify([stored]), '[]']))).toEqual(expected);
    expect(returned(await query(PER_ITEM, [tenantId, ROLE, JSON.stringify(stored), null]))).toEqual(expected);
  });

  it('should refuse a parts argument that is not a JSON array, on either path', async () => {
    const { tenantId, items } = await setUp([item('m1'), item('m1')], false);
    // One item (the set-based path), and a message id twice (the per-item path).
    for (const parts of ['{}', 'null', '"[]"'])
      for (const batchItems of [items.slice(0, 1), items])
        expect(
          await outcome(() => query(BATCH, [tenantId, ROLE, JSON.stringify(batchItems.map(withoutParts)), parts])),
        ).toEqual({ error: '22023' });
  });
});
