import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, type TenantHistory } from '../../src/index.js';
import type { StorableMessage } from '../../src/model/stored-rows.js';
import { generateConversation } from '../support/agent-conversations.js';
import { asChatWindowPage } from '../support/fixtures.js';
import { planNodes } from '../support/nested-plans.js';
import { longThread } from '../support/long-thread.js';
import { CONTRACT_BACKENDS, useTestDatabase } from '../support/test-database.js';

/** AI SDK v4/v5 shapes an old row may hold (schema_version 1), and a v7 part that an old row may hold too. */
const OLD_PARTS = [
  {
    type: 'tool-invocation',
    toolInvocation: { state: 'result', toolCallId: 'old-1', toolName: 'weather', args: { city: 'Oslo' }, result: 3 },
  },
  { type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId: 'old-2', toolName: 'search', args: {} } },
  { type: 'file', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
  { type: 'tool-runQuery', toolCallId: 'old-3', state: 'output-error', rawInput: 'select 1', errorText: 'denied' },
  { type: 'text', text: 'a v7 part in an old row' },
];

const METADATA = [{}, { createdAt: '2026-01-01T00:00:00.000Z' }, { usage: { inputTokens: 3 }, tags: ['a', 'ü'] }];

/** Text a read must print and parse back unchanged: escapes, line separators, astral and combining characters, no NUL. */
const STRANGE_TEXT = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('"', '\\', '\n', '\u2028', '\u001f', '\u007f', '😀', 'é', 'ü', '\t'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
  })
  .filter((value) => !value.includes('\u0000'));
/** A user message with such text in its parts, metadata, id and request id, and numbers JSON prints in several ways. */
const STRANGE_MESSAGE = fc.record({
  id: STRANGE_TEXT.filter((value) => value.length > 0),
  text: STRANGE_TEXT,
  size: fc.integer({ min: 0, max: 70_000 }),
  number: fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.constantFrom(0.1, 1e21, -0, 2 ** 53 + 2),
  ),
  requestId: fc.option(
    STRANGE_TEXT.filter((value) => value.length > 0),
    { nil: undefined },
  ),
});

/** What is done to the generated thread after it is written: every field picks messages by index (mod length). */
const mutations = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  userScoped: fc.boolean(),
  metadata: fc.array(fc.nat(METADATA.length - 1), { minLength: 1, maxLength: 8 }),
  excluded: fc.array(fc.nat(), { maxLength: 4 }),
  redacted: fc.array(fc.nat(), { maxLength: 3 }),
  deleted: fc.array(fc.nat(), { maxLength: 3 }),
  old: fc.array(fc.record({ index: fc.nat(), parts: fc.subarray(OLD_PARTS, { minLength: 1 }) }), { maxLength: 4 }),
  pinned: fc.array(fc.nat(), { maxLength: 4 }),
  streaming: fc.boolean(),
  snapshotAt: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  strange: fc.array(STRANGE_MESSAGE, { maxLength: 3 }),
});

describe.each(CONTRACT_BACKENDS)('the one-statement reads on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** The same read inside the caller's transaction: the store then reads the transactional way (Drizzle selects). */
  const inTransaction = <RESULT>(
    tenantId: string,
    userId: string | undefined,
    read: (store: TenantHistory) => Promise<RESULT>,
  ) =>
    database.db.transaction((tx) =>
      read(createAgentHistory({ db: tx }).forTenant(tenantId, userId === undefined ? undefined : { userId })),
    );

  it('should return exactly what the transactional read returns, for generated threads of every part type and state', async () => {
    await fc.assert(
      fc.asyncProperty(mutations, async (plan) => {
        const tenantId = randomUUID();
        const userId = plan.userScoped ? 'user-a' : undefined;
        const store = createAgentHistory({ db: database.db }).forTenant(
          tenantId,
          userId === undefined ? undefined : { userId },
        );
        const thread = (await store.createThread({ title: 'generated' })).id;
        const run = await store.startRun(thread);
        const { rows } = generateConversation(plan.seed, { maxMessages: 20 });
        for (const [index, row] of rows.entries()) {
          const metadata = METADATA[plan.metadata[index % plan.metadata.length]!]!;
          await store.appendMessage(thread, { ...(row.message as StorableMessage), metadata } as StorableMessage, {
            pinned: row.pinned,
            runId: index % 3 === 0 ? run.id : undefined,
            clientRequestId: index % 4 === 0 ? `request-${index}` : undefined,
          });
        }
        for (const [index, strange] of plan.strange.entries()) {
          await store.appendMessage(
            thread,
            {
              id: `${strange.id}-${index}`,
              role: 'user',
              parts: [{ type: 'text', text: strange.text + 'x'.repeat(strange.size) + strange.text }],
              metadata: { [strange.text]: strange.number, nested: [strange.text, { n: strange.number }] },
            } as StorableMessage,
            { clientRequestId: strange.requestId === undefined ? undefined : `${strange.requestId}-${index}` },
          );
        }
        const ids = [
          ...rows.map((row) => row.message.id),
          ...plan.strange.map((strange, index) => `${strange.id}-${index}`),
        ];
        const pick = (indexes: number[]) => [...new Set(indexes.map((index) => ids[index % ids.length]!))];
        for (const id of pick(plan.pinned)) await store.pinMessage(thread, id);
        if (plan.excluded.length > 0)
          await store.excludeMessages(thread, pick(plan.excluded), { reason: 'superseded' });
        for (const id of pick(plan.redacted)) await store.redactMessage(thread, id, { actor: 'test', reason: 'pii' });
        for (const { index, parts } of plan.old) {
          await database.admin.query(
            `update agent_message set parts = $1::text::json, schema_version = 1 where thread_id = $2 and message_id = $3`,
            [JSON.stringify(parts), thread, ids[index % ids.length]],
          );
        }
        await database.admin.query(
          `update agent_message set deleted_at = now() where thread_id = $1 and message_id = any($2::text[])`,
          [thread, pick(plan.deleted)],
        );
        if (plan.streaming) await store.beginAssistantMessage(thread, { messageId: 'in-progress', runId: run.id });
        if (plan.snapshotAt !== undefined) {
          const boundary = Math.max(1, Math.floor(plan.snapshotAt * ids.length));
          const summary = await store.writeSummary(thread, {
            fromSequence: 1,
            throughSequence: boundary,
            content: 'summary',
            tokenCount: 1,
            policyVersion: 'p',
          });
          await store.writeSnapshot(thread, {
            expectedVersion: 0,
            throughSequence: boundary,
            summaryId: summary.id,
            includedSequences: [boundary],
            policyVersion: 'p',
            messagesHash: 'h',
          });
        }

        for (const options of [
          {},
          { limit: 1 },
          { limit: 7, before: Math.ceil(ids.length / 2) + 1 },
          { limit: 500, onlyEligible: true },
          { roles: ['assistant' as const] },
        ]) {
          const fast = await store.listMessages(thread, options);
          expect(fast).toStrictEqual(
            await inTransaction(tenantId, userId, (slow) => slow.listMessages(thread, options)),
          );
        }
        // A chat window's page: the stored page's messages, projected and oldest first, read both ways.
        for (const options of [
          {},
          { limit: 1 },
          { limit: 7, before: Math.ceil(ids.length / 2) + 1 },
          { limit: 500, onlyEligible: true },
          { limit: 3, onlyEligible: true, before: ids.length },
        ]) {
          const chat = await store.listChatMessages(thread, options);
          const stored = await store.listMessages(thread, options);
          expect(chat).toStrictEqual(asChatWindowPage(stored));
          expect(chat).toStrictEqual(
            await inTransaction(tenantId, userId, (slow) => slow.listChatMessages(thread, options)),
          );
        }
        for (const maxTailMessages of [1, 3, 2000]) {
          const fast = await store.loadContext(thread, { maxTailMessages });
          expect(fast).toStrictEqual(
            await inTransaction(tenantId, userId, (slow) => slow.loadContext(thread, { maxTailMessages })),
          );
        }
      }),
      { numRuns: backend === 'pglite' || backend === 'postgres' ? 12 : 4 },
    );
  });

  it('should read a page of a thread that holds most of the table through the index, not by scanning the thread', async () => {
    const { tenantId, thread, store } = await longThread(database);
    const { messages: page } = await store.listMessages(thread, { limit: 51 });
    expect(page.map((message) => message.sequence)).toEqual(Array.from({ length: 51 }, (_, index) => 5000 - index));
    // The row-level security policy's user clause gets the planner's default selectivity (0.5 %): it took the
    // thread for 25 visible rows and scanned and sorted all 5,000 instead of walking the index to the LIMIT. The
    // plan the function's query ran with, as the server logged it (the function switches to the application role,
    // so the policy applies as it does for the store).
    // Both forms of the page read: typed rows and json chunks (the store reads the json form on PGlite).
    // And a chat window's page, whose thread check is in the page's own query. Each newest and deep (`before`), with
    // the plan Postgres picks and with a generic plan (what a session's cached plan becomes after five calls): the
    // page's bound must stay an index condition in both.
    const reads = [
      'agent_history_list_messages',
      'agent_history_list_messages_json',
      'agent_history_list_chat_messages',
    ];
    for (const read of reads)
      for (const before of [null, 2501])
        for (const mode of ['auto', 'force_generic_plan']) {
          const label = `${read}, before ${before}, ${mode}`;
          const rest = read === 'agent_history_list_chat_messages' ? 'false' : 'null, false';
          const plans = await database.explainNested(
            `select * from ${read}('${tenantId}'::uuid, 'agent_history_app', null, '${thread}'::uuid, ${before}, 51, ${rest})`,
            [`plan_cache_mode = ${mode}`],
          );
          const pageQuery = plans.filter((plan) => plan['Query Text'].includes('FROM "public"."agent_message" m'));
          expect(pageQuery, label).toHaveLength(1);
          const nodes = planNodes(pageQuery[0]!.Plan);
          expect(
            nodes.map((node) => node['Node Type']),
            label,
          ).not.toContain('Sort');
          const scans = nodes.filter((node) => node['Relation Name'] === 'agent_message');
          expect(
            scans.map((node) => [node['Node Type'], node['Index Name']]),
            label,
          ).toEqual([['Index Scan', 'agent_message_thread_sequence_uidx']]);
          // Rows the scan read and handed up: the page, not the thread's 5,000 nor the 2,500 newer than `before`.
          expect(scans[0]!['Actual Rows'], label).toBe(51);
          expect(scans[0]!['Rows Removed by Filter'] ?? 0, label).toBe(0);
        }
  });
});
