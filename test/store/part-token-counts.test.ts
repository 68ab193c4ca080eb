import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, type TenantHistory } from '../../src/index.js';
import { countStoredPartTokens, storedTokenCountId } from '../../src/context/index.js';
import { loadO200kTokenCounter, type TokenCounter } from '../../src/tokens/token-counter.js';
import type { ContextUIMessage } from '../../src/model/context-ui-message.js';
import type { StorableMessage, StoredMessage } from '../../src/model/stored-rows.js';
import type { StoredMessagePart } from '../../src/schema/index.js';
import { generateConversation } from '../support/agent-conversations.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

// The store writes each message's per-part token counts with its count, in the same statement, on
// every path that sets the count, and every read returns them, so the context engine never tokenizes a stored part.

const counter = await loadO200kTokenCounter();
const COUNTER_ID = storedTokenCountId(counter);

/** AI SDK v4 parts an old row may hold (schema_version 1): converted on every read, never rewritten. */
const OLD_PARTS = [
  {
    type: 'tool-invocation',
    toolInvocation: { state: 'result', toolCallId: 'old-1', toolName: 'weather', args: { city: 'Oslo' }, result: 3 },
  },
  { type: 'text', text: 'an old answer' },
];

/**
 * The rule for one message as read: counts are null exactly when the count is (streaming, a row migrated to a new
 * shape and not recounted yet), and otherwise are what `countStoredPartTokens` makes of the message as read, summing
 * to the count, by the store's counter.
 */
function expectExactCounts(stored: StoredMessage, where: string) {
  const label = `${where}: ${stored.message.id} (${stored.status}, ${stored.contextState})`;
  if (stored.tokenCount === null) {
    expect(stored.partTokenCounts, label).toBeNull();
    return;
  }
  expect(stored.tokenCounterId, label).toBe(COUNTER_ID);
  const expected = countStoredPartTokens({ message: stored.message as ContextUIMessage, tokenCounter: counter });
  expect(stored.partTokenCounts, label).toEqual(expected);
  expect(
    stored.partTokenCounts!.reduce((sum, count) => sum + count, 0),
    label,
  ).toBe(stored.tokenCount);
}

/** Every read that returns messages, the one-statement way and inside a transaction (the fallback). */
async function readEverywhere(
  store: TenantHistory,
  inTransaction: <T>(read: (store: TenantHistory) => Promise<T>) => Promise<T>,
  thread: string,
): Promise<StoredMessage[]> {
  const all: StoredMessage[] = [];
  for (const reader of [store, null]) {
    const read = <T>(fn: (store: TenantHistory) => Promise<T>) => (reader ? fn(reader) : inTransaction(fn));
    const page = await read((s) => s.listMessages(thread, { limit: 500 }));
    const context = await read((s) => s.loadContext(thread));
    for (const message of page.messages) all.push(message);
    for (const message of [...context.tail, ...context.pinned]) all.push(message);
    for (const message of page.messages.slice(0, 3))
      all.push(await read((s) => s.getMessage(thread, message.message.id)));
  }
  return all;
}

const plans = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  batched: fc.boolean(),
  streamed: fc.array(fc.nat(), { maxLength: 3 }),
  finalStatus: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const),
  leftStreaming: fc.boolean(),
  reopened: fc.array(fc.record({ index: fc.nat(), withRun: fc.boolean() }), { maxLength: 2 }),
  forkAt: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  redacted: fc.array(fc.record({ index: fc.nat(), spans: fc.boolean() }), { maxLength: 3 }),
  old: fc.array(fc.nat(), { maxLength: 2 }),
  rebuild: fc.boolean(),
});

describe.each(BACKENDS)('per-part token counts on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should read back, from every read, the exact per-part counts of every message written by every path', async () => {
    await fc.assert(
      fc.asyncProperty(plans, async (plan) => {
        const tenantId = randomUUID();
        const history = createAgentHistory({ db: database.db, appendBatching: plan.batched ? undefined : false });
        const store = history.forTenant(tenantId);
        const inTransaction = <T>(read: (store: TenantHistory) => Promise<T>) =>
          database.db.transaction((tx) => read(createAgentHistory({ db: tx }).forTenant(tenantId)));
        const thread = (await store.createThread()).id;
        const run = await store.startRun(thread);
        const { rows } = generateConversation(plan.seed, { maxMessages: 14 });
        const messages = rows.map((row) => row.message as StorableMessage);
        const assistants = messages.filter((message) => message.role === 'assistant' && message.parts.length > 0);
        const streamed = new Set(plan.streamed.map((index) => assistants[index % assistants.length]?.id));
        // Appends: alone, or several in flight at once (the batch function), and some answers streamed instead.
        const pending: Array<Promise<unknown>> = [];
        const returned: StoredMessage[] = [];
        const threads = [thread];
        const oldIds = new Set<string>();
        let rebuilt = false;
        /** The rule on every message of every thread, from every read, and on what the writes returned. */
        const check = async (step: string) => {
          for (const stored of returned.splice(0)) expectExactCounts(stored, `${step}, as returned`);
          for (const id of threads)
            for (const message of await readEverywhere(store, inTransaction, id)) {
              expectExactCounts(message, `${step}, ${id === thread ? 'source' : 'fork'}`);
              // Null only where no count is stored: a message streaming, or of an old shape not recounted yet.
              const finished = message.status !== 'pending' && message.status !== 'streaming';
              const old =
                message.storedSchemaVersion < 2 || (id === thread && oldIds.has(message.message.id) && !rebuilt);
              // A fork copies a message that was streaming as failed, with the counts it had: none.
              const copyOfStreaming = id !== thread && message.status === 'failed';
              if (old) expect([message.tokenCount, message.partTokenCounts]).toEqual([null, null]);
              else if (finished && !copyOfStreaming)
                expect(message.partTokenCounts, `${step}: ${message.message.id}`).not.toBeNull();
            }
        };
        for (const [index, message] of messages.entries()) {
          if (streamed.has(message.id)) {
            await Promise.all(pending.splice(0));
            await store.beginAssistantMessage(thread, { messageId: message.id, runId: run.id });
            const parts = message.parts as StoredMessagePart[];
            await store.checkpointMessage(thread, message.id, { parts: parts.slice(0, Math.ceil(parts.length / 2)) });
            returned.push(await store.finalizeMessage(thread, message.id, { status: plan.finalStatus, parts }));
            continue;
          }
          const append = store
            .appendMessage(thread, message, { pinned: rows[index]!.pinned === true })
            .then(({ stored }) => returned.push(stored));
          if (plan.batched) pending.push(append);
          else await append;
        }
        await Promise.all(pending);
        await check('appended');
        if (plan.leftStreaming) {
          await store.beginAssistantMessage(thread, { messageId: 'in-progress', runId: run.id });
          await store.checkpointMessage(thread, 'in-progress', { parts: [{ type: 'text', text: 'so far' }] });
        }
        // Reopened answers (approval continuations): new parts, completed or streaming again under a run.
        for (const { index, withRun } of plan.reopened) {
          const target = assistants[index % assistants.length];
          if (!target) continue;
          const current = await store.getMessage(thread, target.id);
          if (current.status !== 'completed') continue;
          const parts = current.message.parts as StoredMessagePart[];
          const next: StoredMessagePart[] = [...parts, { type: 'text', text: `more after ${target.id}` }];
          const reopenRun = withRun ? (await store.startRun(thread)).id : undefined;
          const { stored } = await store.reopenAssistantMessage(thread, target.id, {
            expectedParts: parts,
            parts: next,
            runId: reopenRun,
          });
          returned.push(stored);
          // Streaming again: a checkpoint replaces the parts the reopening counted.
          if (withRun)
            await store.checkpointMessage(thread, target.id, { parts: [...next, { type: 'text', text: 'and more' }] });
        }
        await check('reopened');
        if (plan.forkAt !== undefined) {
          const atSequence = Math.floor(plan.forkAt * messages.length);
          threads.push((await store.forkThread(thread, { atSequence })).id);
          await check('forked');
        }
        // Redactions reach the fork's copies too.
        for (const { index, spans } of plan.redacted) {
          const target = messages[index % messages.length]!;
          const secret = JSON.stringify(target.parts).match(/[A-Za-z]{5,}/)?.[0];
          const redacted = await store.redactMessage(thread, target.id, {
            actor: 'test',
            reason: 'pii',
            ...(spans && secret ? { spans: [secret] } : {}),
          });
          returned.push(redacted);
        }
        await check('redacted');
        // Rows of an old message shape, as an old release left them, brought up to date in place.
        for (const index of plan.old) {
          const id = messages[index % messages.length]!.id;
          const [{ n }] = await database.admin.query<{ n: number }>(
            `with changed as (update agent_message set parts = $1::text::json, schema_version = 1
               where thread_id = $2 and message_id = $3 and status = 'completed' and redacted_at is null returning 1)
             select count(*)::int as n from changed`,
            [JSON.stringify(OLD_PARTS), thread, id],
          );
          if (n === 1) oldIds.add(id);
        }
        await check('old rows');
        if (plan.rebuild) {
          await store.rebuildDerivedData();
          rebuilt = true;
          await check('rebuilt');
        }
      }),
      { numRuns: 10 },
    );
  });

  it('should give a redacted message counts of its redacted parts, never the counts of what it held before', async () => {
    const store = createAgentHistory({ db: database.db, appendBatching: false }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    const parts: StoredMessagePart[] = [
      { type: 'reasoning', text: 'the card number is 4111 1111 1111 1111, I should not repeat it' },
      { type: 'text', text: 'Your card 4111 1111 1111 1111 is on file. Anything else about the card?' },
    ];
    const { stored } = await store.appendMessage(thread, { id: 'a', role: 'assistant', parts });
    expect(stored.partTokenCounts).toEqual(
      countStoredPartTokens({ message: stored.message as never, tokenCounter: counter }),
    );
    const fork = await store.forkThread(thread, { atSequence: 1 });
    for (const options of [{ spans: ['4111 1111 1111 1111'] }, {}]) {
      const redacted = await store.redactMessage(thread, 'a', { actor: 'test', reason: 'pci', ...options });
      for (const read of [redacted, await store.getMessage(thread, 'a'), await store.getMessage(fork.id, 'a')]) {
        expectExactCounts(read, 'redacted');
        expect(read.partTokenCounts).not.toEqual(stored.partTokenCounts);
      }
    }
  });

  it('should recount the part counts with the count when the counter changes, and fill in those of a row without them', async () => {
    const tenantId = randomUUID();
    const old = createAgentHistory({ db: database.db, appendBatching: false }).forTenant(tenantId);
    const thread = (await old.createThread()).id;
    await old.appendMessage(thread, { id: 'u', role: 'user', parts: [{ type: 'text', text: 'What is new today?' }] });
    await old.appendMessage(thread, {
      id: 'a',
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: 'Look it up.' },
        { type: 'text', text: 'Nothing much, the weather is fine.' },
      ],
    });
    // A row with a count and no part counts (counted while streaming, or cleared for a rebuild).
    await database.admin.query(
      `update agent_message set part_token_counts = null where thread_id = $1 and message_id = 'u'`,
      [thread],
    );
    expect((await old.getMessage(thread, 'u')).partTokenCounts).toBeNull();
    expect((await old.rebuildDerivedData()).tokenCounts).toBe(1);
    expectExactCounts(await old.getMessage(thread, 'u'), 'filled in');

    // Another counter: every count and every part count is its.
    const doubled: TokenCounter = { id: 'doubled', count: (text) => 2 * counter.count(text) };
    const store = createAgentHistory({ db: database.db, tokenCounter: doubled }).forTenant(tenantId);
    expect((await store.rebuildDerivedData()).tokenCounts).toBe(2);
    for (const read of (await store.listMessages(thread)).messages) {
      const expected = countStoredPartTokens({ message: read.message as never, tokenCounter: doubled });
      expect([read.tokenCounterId, read.partTokenCounts, read.tokenCount]).toEqual([
        storedTokenCountId(doubled),
        expected,
        expected.reduce((sum, count) => sum + count, 0),
      ]);
    }
    expect((await store.rebuildDerivedData()).tokenCounts).toBe(0);
  });

  it('should store no part counts for a counter whose counts are not integers (they could not sum to the count)', async () => {
    const fractional: TokenCounter = { id: 'fractional', count: (text) => text.length / 3 };
    const store = createAgentHistory({ db: database.db, tokenCounter: fractional }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    const { stored } = await store.appendMessage(thread, {
      id: 'u',
      role: 'user',
      parts: [{ type: 'text', text: 'seven c' }],
    });
    expect([stored.tokenCount, stored.partTokenCounts]).toEqual([3, null]);
    expect((await store.getMessage(thread, 'u')).partTokenCounts).toBeNull();
    expect((await store.rebuildDerivedData()).tokenCounts).toBe(0);
  });

  it('should store NULL when the append function is given part counts that do not sum to the count', async () => {
    const tenantId = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const thread = (await store.createThread()).id;
    const call = (messageId: string, counts: string) =>
      database.admin.query<{ part_token_counts: number[] | null }>(
        `select part_token_counts from agent_history_append_message($1::uuid, null, $2::uuid, $3, null, 'user',
           'completed', '[{"type":"text","text":"hello there"}]'::json, '{}'::jsonb, null, 10, 5, 'c', ${counts},
           null, false)`,
        [tenantId, thread, messageId],
      );
    expect(await call('ok', `'{2,3}'::integer[]`)).toEqual([{ part_token_counts: [2, 3] }]);
    for (const [id, counts] of [
      ['over', `'{2,4}'::integer[]`],
      ['negative', `'{6,-1}'::integer[]`],
      ['hole', `'{5,null}'::integer[]`],
      ['none', 'null::integer[]'],
    ] as const)
      expect(await call(id, counts), id).toEqual([{ part_token_counts: null }]);
  });
});
