import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  InvalidArgumentError,
  type SearchHit,
  type SearchIndexing,
  type TenantHistory,
  withTenant,
} from '../../src/index.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { text } from '../support/fixtures.js';

const MODES: SearchIndexing[] = ['inline', 'deferred', false];
const WORDS = ['apple', 'bread', 'cider', 'dough', 'eagle', 'flour', 'grape', 'honey', 'rye', 'salt'];

/** One step of a random workload, applied the same way to a store of each mode. */
type Step =
  | { kind: 'append'; thread: number; words: number[]; role: 'user' | 'assistant' }
  | { kind: 'stream'; thread: number; words: number[] }
  | { kind: 'redact'; pick: number; span: number | null }
  | { kind: 'index'; limit: number };

const words = fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 0, maxLength: 12 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      thread: fc.nat(2),
      words,
      role: fc.constantFrom('user' as const, 'assistant' as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('stream' as const), thread: fc.nat(2), words }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('redact' as const),
      pick: fc.nat(),
      span: fc.option(fc.nat(WORDS.length - 1)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('index' as const), limit: fc.integer({ min: 1, max: 5 }) }) },
);
const queries = fc.array(
  fc.oneof(
    fc.constantFrom(...WORDS),
    fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...WORDS)).map(([a, b]) => `${a} or ${b}`),
    fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...WORDS)).map(([a, b]) => `"${a} ${b}"`),
    fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...WORDS)).map(([a, b]) => `${a} -${b}`),
  ),
  { minLength: 1, maxLength: 4 },
);

const sentence = (indexes: number[]) => indexes.map((index) => WORDS[index]).join(' ');

/** Runs the steps on one store; returns its thread ids (by the step's thread number). */
async function run(store: TenantHistory, steps: Step[]): Promise<string[]> {
  const threads = [];
  for (let thread = 0; thread < 3; thread++) threads.push((await store.createThread()).id);
  const appended: Array<{ thread: string; id: string }> = [];
  for (const [index, current] of steps.entries()) {
    const id = `m-${index}`;
    if (current.kind === 'append') {
      await store.appendMessage(threads[current.thread]!, {
        id,
        role: current.role,
        parts: [text(sentence(current.words))],
      });
      appended.push({ thread: threads[current.thread]!, id });
    } else if (current.kind === 'stream') {
      const thread = threads[current.thread]!;
      await store.beginAssistantMessage(thread, { messageId: id });
      await store.finalizeMessage(thread, id, { status: 'completed', parts: [text(sentence(current.words))] });
      appended.push({ thread, id });
    } else if (current.kind === 'redact' && appended.length > 0) {
      const target = appended[current.pick % appended.length]!;
      const spans = current.span === null ? undefined : [WORDS[current.span]!];
      await store.redactMessage(target.thread, target.id, { spans, actor: 'test', reason: 'property' });
    } else if (current.kind === 'index') {
      await store.indexPendingMessages({ limit: current.limit });
    }
  }
  return threads;
}

/** A hit with its thread replaced by the thread's number, so hits of different tenants compare. */
const comparable = (hits: SearchHit[], threads: string[]) =>
  hits
    .map((hit) => ({
      thread: threads.indexOf(hit.threadId),
      sequence: hit.sequence,
      messageId: hit.messageId,
      rank: hit.rank,
      snippet: hit.snippet,
    }))
    .sort((a, b) => a.messageId.localeCompare(b.messageId));

describe.each(BACKENDS)('search indexing modes on %s', (backend) => {
  const database = useTestDatabase(backend);
  const storeOf = (search: SearchIndexing) => createAgentHistory({ db: database.db, search }).forTenant(randomUUID());
  /** A background store whose drain runs as soon as it can, one message per statement: a second writer at every step. */
  const eagerBackground = () =>
    createAgentHistory({
      db: database.db,
      search: 'background',
      _internal: { searchDrain: { idleMs: 0, maxDelayMs: 0, batchSize: 1 } },
    });
  const vectors = (tenant: string) =>
    database.admin.query<{ message_id: string; indexed: boolean }>(
      `select message_id, search_vector is not null as indexed from agent_message where tenant_id = $1 order by sequence`,
      [tenant],
    );

  it('should store the vector in the append inline, and none deferred or off until indexPendingMessages', async () => {
    for (const search of MODES) {
      const store = storeOf(search);
      const thread = (await store.createThread()).id;
      await store.appendMessage(thread, { id: 'a', role: 'user', parts: [text('sourdough starter')] });
      await store.appendMessage(thread, { id: 'b', role: 'user', parts: [text('rye bread')] });
      expect((await vectors(store.tenantId)).map((row) => row.indexed)).toEqual(
        search === 'inline' ? [true, true] : [false, false],
      );
      expect((await store.searchMessages('sourdough')).map((hit) => hit.messageId)).toEqual(['a']);
      expect(await store.indexPendingMessages({ limit: 1 })).toEqual({
        indexed: search === 'inline' ? 0 : 1,
        remaining: search !== 'inline',
      });
      expect(await store.indexPendingMessages()).toEqual({ indexed: search === 'inline' ? 0 : 1, remaining: false });
      expect((await vectors(store.tenantId)).map((row) => row.indexed)).toEqual([true, true]);
      expect((await store.searchMessages('rye')).map((hit) => hit.messageId)).toEqual(['b']);
    }
  });

  it('should leave a streamed answer unindexed through checkpoints and finalize unless inline', async () => {
    for (const search of MODES) {
      const store = storeOf(search);
      const thread = (await store.createThread()).id;
      await store.beginAssistantMessage(thread, { messageId: 'a' });
      await store.checkpointMessage(thread, 'a', { parts: [text('half an answer')] });
      expect((await vectors(store.tenantId)).map((row) => row.indexed)).toEqual([search === 'inline']);
      await store.finalizeMessage(thread, 'a', { status: 'completed', parts: [text('the whole answer')] });
      expect((await vectors(store.tenantId)).map((row) => row.indexed)).toEqual([search === 'inline']);
      expect((await store.searchMessages('whole')).map((hit) => hit.messageId)).toEqual(['a']);
      expect(await store.searchMessages('half')).toEqual([]);
    }
  });

  it("should replace a vector written directly by the parts' one, and keep only a clearing for a rebuild", async () => {
    const store = storeOf('inline');
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, { id: 'a', role: 'user', parts: [text('plain words')] });
    const asApp = (statement: string) =>
      withTenant(database.db, { tenantId: store.tenantId, role: 'agent_history_app' }, (tx) =>
        tx.execute(sql.raw(statement)),
      );
    const own = `where tenant_id = '${store.tenantId}'`;
    await asApp(`update agent_message set search_vector = to_tsvector('simple', 'forged') ${own}`);
    expect(await store.searchMessages('forged')).toEqual([]);
    expect((await store.searchMessages('plain')).map((hit) => hit.messageId)).toEqual(['a']);
    await asApp(`update agent_message set search_vector = null ${own}`);
    expect((await vectors(store.tenantId))[0]!.indexed).toBe(false);
    expect((await store.searchMessages('plain')).map((hit) => hit.messageId)).toEqual(['a']);
    expect(await store.indexPendingMessages()).toEqual({ indexed: 1, remaining: false });
    expect((await vectors(store.tenantId))[0]!.indexed).toBe(true);
  });

  // json takes a \u0000 escape that jsonb refuses; a deferred row holding one would make every search and indexing
  // of its tenant fail on it. A plain UPDATE as the app login, deferring as the store's checkpoints do.
  it('should refuse parts holding a \\u0000 escape in a deferred write, and take an escaped backslash before u0000', async () => {
    const store = storeOf('deferred');
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, { id: 'a', role: 'user', parts: [text('fine words')] });
    const write = (parts: string) =>
      withTenant(database.db, { tenantId: store.tenantId, role: 'agent_history_app' }, async (tx) => {
        await tx.execute(
          sql`update agent_message set parts = ${parts}::json, search_version = -1 where tenant_id = ${store.tenantId}`,
        );
      }).then(() => 'written', postgresErrorCode);
    expect(await write('[{"type":"text","text":"a NUL \\u0000 here"}]')).toBe('22P05');
    expect(await write('[{"type":"text","text":"a backslash \\\\u0000 here"}]')).toBe('written');
    expect((await store.searchMessages('backslash')).map((hit) => hit.messageId)).toEqual(['a']);
    expect(await store.indexPendingMessages()).toEqual({ indexed: 1, remaining: false });
    expect((await store.getMessage(thread, 'a')).message.parts).toEqual([text('a backslash \\u0000 here')]);
  });

  it('should never index another tenant', async () => {
    const deferred = storeOf('deferred');
    const other = storeOf('deferred');
    const thread = (await deferred.createThread()).id;
    await deferred.appendMessage(thread, { id: 'a', role: 'user', parts: [text('private words')] });
    expect(await other.indexPendingMessages()).toEqual({ indexed: 0, remaining: false });
    expect(await other.searchMessages('private')).toEqual([]);
    expect((await vectors(deferred.tenantId))[0]!.indexed).toBe(false);
  });

  it('should recompute the vector of a redacted message whatever the mode', async () => {
    for (const search of MODES) {
      const store = storeOf(search);
      const thread = (await store.createThread()).id;
      await store.appendMessage(thread, { id: 'a', role: 'user', parts: [text('my secret is hunter2 ok')] });
      await store.redactMessage(thread, 'a', { spans: ['hunter2'], actor: 'test', reason: 'pii' });
      const [row] = await database.admin.query<{ vector: string | null }>(
        `select search_vector::text as vector from agent_message where tenant_id = $1`,
        [store.tenantId],
      );
      expect(row!.vector ?? '').not.toContain('hunter2');
      expect(await store.searchMessages('hunter2')).toEqual([]);
    }
  });

  it('should refuse an unknown mode', () => {
    expect(() => createAgentHistory({ db: database.db, search: 'later' as never })).toThrow(InvalidArgumentError);
    expect(() => createAgentHistory({ db: database.db, search: true as never })).toThrow(InvalidArgumentError);
  });

  it('should give the same hits in every mode after random appends, streams, redactions and partial indexing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), queries, async (steps, searched) => {
        const background = eagerBackground();
        const runs = await Promise.all(
          [...MODES.map((search) => storeOf(search)), background.forTenant(randomUUID())].map(async (store) => ({
            store,
            threads: await run(store, steps),
          })),
        );
        for (const query of searched) {
          const [inline, ...others] = await Promise.all(
            runs.map(async ({ store, threads }) =>
              comparable(await store.searchMessages(query, { limit: 100 }), threads),
            ),
          );
          for (const other of others) expect(other).toEqual(inline);
        }
        // Once drained, the background store's vectors are the inline store's, message by message.
        await background.drainSearch();
        const stored = async (tenant: string) =>
          database.admin.query<{ message_id: string; vector: string | null }>(
            `select message_id, search_vector::text as vector from agent_message where tenant_id = $1 order by message_id`,
            [tenant],
          );
        expect(await stored(runs.at(-1)!.store.tenantId)).toEqual(await stored(runs[0]!.store.tenantId));
      }),
      { numRuns: backend === 'pglite' ? 15 : 25 },
    );
  }, 240_000);
});
