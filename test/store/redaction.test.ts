import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, NotFoundError, type TenantHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { text } from '../support/fixtures.js';
import { TABLES } from '../support/tables.js';

const PASSWORD = 'Hunter2Xyzzy';
// Each test has its own secret, so a failure in one never shows up in another's scan.
const STREAMED_KEY = 'StreamKey9Qwerty';
const KEPT_PASSWORD = 'Untouched7Secret';
const CARD = '4111222233334444';

type MessageRow = {
  parts: unknown[];
  metadata: Record<string, unknown>;
  context_state: string;
  content_version: number;
  redacted_at: Date | null;
  search_vector: string;
};
type AuditRow = { action: string; actor: string; reason: string | null; details: Record<string, unknown> };
type SummaryRow = { from_sequence: string; content: string; stale: boolean };
type SnapshotRow = { version: number; stale: boolean };

describe.each(BACKENDS)('redactMessage on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** Every table of the database, every column (row cast to text, generated tsvector included): where `needle` occurs. */
  async function findEverywhere(needle: string): Promise<Record<string, number>> {
    const tables = await database.admin.query<{ schema: string; name: string }>(
      `select table_schema as schema, table_name as name from information_schema.tables
       where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining([...TABLES]));
    const found: Record<string, number> = {};
    for (const { schema, name } of tables) {
      const [row] = await database.admin.query<{ count: string }>(
        `select count(*)::text as count from "${schema}"."${name}" t where t::text ilike $1`,
        [`%${needle}%`],
      );
      if (Number(row!.count) > 0) found[name] = Number(row!.count);
    }
    return found;
  }

  const readMessage = async (threadId: string, messageId: string) =>
    (
      await database.admin.query<MessageRow>(
        `select parts, metadata, context_state, content_version, redacted_at, search_vector::text as search_vector
       from agent_message where thread_id = $1 and message_id = $2`,
        [threadId, messageId],
      )
    )[0]!;
  const readAudit = (threadId: string) =>
    database.admin.query<AuditRow>(
      "select action, actor, reason, details from agent_audit_event where thread_id = $1 and action = 'message-redacted'",
      [threadId],
    );
  const readSummaries = (threadId: string) =>
    database.admin.query<SummaryRow>(
      'select from_sequence::text, content, stale from agent_summary where thread_id = $1 order by from_sequence',
      [threadId],
    );
  const readSnapshots = (threadId: string) =>
    database.admin.query<SnapshotRow>(
      'select version, stale from agent_context_snapshot where thread_id = $1 order by version',
      [threadId],
    );

  /**
   * Six messages; the password is in message 2 (parts and metadata). Summary A [2, 5] quotes it, summary B
   * [3, 4] does not; snapshot 1 stops at 1 (before it), snapshot 2 at 2 (inclusive: it covers it) with summary A.
   */
  async function threadWithPassword(store: TenantHistory, password = PASSWORD) {
    const thread = await store.createThread({ userId: 'alice', title: 'Account help', metadata: { topic: 'login' } });
    await store.appendMessage(thread.id, { id: 'm-1', role: 'user', parts: [text('I cannot log in')] });
    await store.appendMessage(thread.id, {
      id: 'm-2',
      role: 'user',
      parts: [text(`my password is ${password}`)],
      metadata: { pasted: password },
    });
    for (let sequence = 3; sequence <= 6; sequence++) {
      await store.appendMessage(thread.id, {
        id: `m-${sequence}`,
        role: sequence % 2 ? 'user' : 'assistant',
        parts: [text(`turn ${sequence}`)],
      });
    }
    const summaryA = await store.writeSummary(thread.id, {
      fromSequence: 2,
      throughSequence: 5,
      content: `Alice shared ${password}.`,
      tokenCount: 6,
      policyVersion: 'p1',
    });
    const summaryB = await store.writeSummary(thread.id, {
      fromSequence: 3,
      throughSequence: 4,
      content: 'Turns 3 and 4.',
      tokenCount: 4,
      policyVersion: 'p1',
    });
    const snapshot = { includedSequences: [], policyVersion: 'p1', messagesHash: 'h' };
    await store.writeSnapshot(thread.id, { ...snapshot, expectedVersion: 0, throughSequence: 1 });
    await store.writeSnapshot(thread.id, {
      ...snapshot,
      expectedVersion: 1,
      throughSequence: 2,
      summaryId: summaryA.id,
    });
    return { thread, summaryA, summaryB };
  }

  it('should redact a whole message and leave the password in no table', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const { thread, summaryA, summaryB } = await threadWithPassword(store);
    expect(await findEverywhere(PASSWORD)).toEqual({ agent_message: 1, agent_summary: 1 });
    expect((await store.searchMessages(PASSWORD)).map((hit) => hit.messageId)).toEqual(['m-2']);
    const before = await store.loadContext(thread.id);
    expect([before.snapshot?.version, before.summary?.id, before.latestSummary?.id]).toEqual([
      2,
      summaryA.id,
      summaryA.id,
    ]);

    const redacted = await store.redactMessage(thread.id, 'm-2', {
      actor: 'admin:7',
      reason: 'user asked to remove a password',
    });
    expect(await findEverywhere(PASSWORD)).toEqual({});

    expect([
      redacted.message,
      redacted.contextState,
      redacted.contentVersion,
      redacted.redactedAt instanceof Date,
    ]).toEqual([{ id: 'm-2', role: 'user', parts: [text('[redacted]')] }, 'redacted', 2, true]);
    const row = await readMessage(thread.id, 'm-2');
    expect(row).toMatchObject({
      parts: [text('[redacted]')],
      metadata: {},
      context_state: 'redacted',
      content_version: 2,
      search_vector: "'redacted':1",
    });
    expect(row.redacted_at).toBeInstanceOf(Date);
    expect(await readMessage(thread.id, 'm-1')).toMatchObject({
      parts: [text('I cannot log in')],
      context_state: 'eligible',
      content_version: 1,
      redacted_at: null,
    });

    expect(await readAudit(thread.id)).toEqual([
      {
        action: 'message-redacted',
        actor: 'admin:7',
        reason: 'user asked to remove a password',
        details: {
          mode: 'whole-message',
          spanCount: 0,
          contentVersion: 2,
          forkCopy: false,
          staleSummaries: 1,
          memoryDeleted: 0,
          memoryScrubbed: 0,
          staleSnapshots: 1,
        },
      },
    ]);
    expect(await readSummaries(thread.id)).toEqual([
      { from_sequence: '2', content: '[summary withdrawn: a covered message was redacted]', stale: true },
      { from_sequence: '3', content: 'Turns 3 and 4.', stale: false },
    ]);
    expect(await readSnapshots(thread.id)).toEqual([
      { version: 1, stale: false },
      { version: 2, stale: true },
    ]);
    const after = await store.loadContext(thread.id);
    expect([after.snapshot?.version, after.summary, after.latestSummary?.id, after.currentVersion]).toEqual([
      1,
      null,
      summaryB.id,
      2,
    ]);
    expect(after.tail.map((stored) => [stored.sequence, stored.contextState])).toEqual([
      [2, 'redacted'],
      [3, 'eligible'],
      [4, 'eligible'],
      [5, 'eligible'],
      [6, 'eligible'],
    ]);
    expect(await store.searchMessages(PASSWORD)).toEqual([]);
  });

  it('should redact spans wherever they occur in the message and in the thread title and metadata', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({ title: `Card ${CARD} declined`, metadata: { card: CARD, [CARD]: true } });
    await store.appendMessage(thread.id, {
      id: 'm-1',
      role: 'user',
      parts: [text(`my card ${CARD} was declined, thanks`)],
      metadata: { raw: `card=${CARD}` },
    });
    await store.appendMessage(thread.id, {
      id: 'm-2',
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: `card ${CARD} looks valid`, state: 'done' },
        {
          type: 'tool-checkCard',
          toolCallId: 'c-1',
          state: 'output-available',
          input: { card: CARD },
          output: { ok: false, echo: `${CARD}` },
        },
        text('The bank declined it.'),
      ],
    });
    const summary = await store.writeSummary(thread.id, {
      fromSequence: 1,
      throughSequence: 1,
      content: 'A card was declined.',
      tokenCount: 5,
      policyVersion: 'p1',
    });
    expect(await findEverywhere(CARD)).toEqual({ agent_thread: 1, agent_message: 2 });

    await store.redactMessage(thread.id, 'm-1', { spans: [CARD], actor: 'support:3', reason: 'pci' });
    await store.redactMessage(thread.id, 'm-2', {
      spans: [CARD],
      replacement: '****',
      actor: 'support:3',
      reason: 'pci',
    });
    expect(await findEverywhere(CARD)).toEqual({});

    expect(await readMessage(thread.id, 'm-1')).toMatchObject({
      parts: [text('my card [redacted] was declined, thanks')],
      metadata: { raw: 'card=[redacted]' },
      context_state: 'redacted',
      content_version: 2,
    });
    expect((await readMessage(thread.id, 'm-2')).parts).toEqual([
      { type: 'reasoning', text: 'card **** looks valid', state: 'done' },
      {
        type: 'tool-checkCard',
        toolCallId: 'c-1',
        state: 'output-available',
        input: { card: '****' },
        output: { ok: false, echo: '****' },
      },
      text('The bank declined it.'),
    ]);
    const [threadRow] = await database.admin.query<{ title: string; metadata: unknown }>(
      'select title, metadata from agent_thread where id = $1',
      [thread.id],
    );
    expect(threadRow).toEqual({
      title: 'Card [redacted] declined',
      metadata: { card: '[redacted]', '[redacted]': true },
    });
    expect((await readAudit(thread.id)).map((event) => [event.actor, event.reason, event.details])).toEqual([
      [
        'support:3',
        'pci',
        {
          mode: 'spans',
          spanCount: 1,
          contentVersion: 2,
          forkCopy: false,
          staleSummaries: 1,
          staleSnapshots: 0,
          memoryDeleted: 0,
          memoryScrubbed: 0,
        },
      ],
      [
        'support:3',
        'pci',
        {
          mode: 'spans',
          spanCount: 1,
          contentVersion: 2,
          forkCopy: false,
          staleSummaries: 0,
          staleSnapshots: 0,
          memoryDeleted: 0,
          memoryScrubbed: 0,
        },
      ],
    ]);
    expect((await store.listSummaries(thread.id)).map((stored) => [stored.id, stored.stale])).toEqual([
      [summary.id, true],
    ]);
    expect((await store.searchMessages('thanks')).map((hit) => hit.messageId)).toEqual(['m-1']);
    expect(await store.searchMessages(CARD)).toEqual([]);
  });

  it('should not let the writer of a streaming message undo its redaction', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    const leaked = [text(`Your key is ${STREAMED_KEY}`)];
    await store.checkpointMessage(thread.id, 'a-1', { parts: leaked });
    await store.redactMessage(thread.id, 'a-1', { actor: 'moderator', reason: 'leaked credential' });

    const refused =
      'Invalid messageId "a-1": the message was redacted while it was being written; it takes no more content.';
    await expect(store.checkpointMessage(thread.id, 'a-1', { parts: [...leaked, text(' and more')] })).rejects.toThrow(
      refused,
    );
    await expect(store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: leaked })).rejects.toThrow(
      refused,
    );
    expect(await findEverywhere(STREAMED_KEY)).toEqual({});
    expect(await readMessage(thread.id, 'a-1')).toMatchObject({
      parts: [text('[redacted]')],
      context_state: 'redacted',
      // 1 as begun, 2 for the checkpoint, 3 for the redaction; the refused writes raise nothing.
      content_version: 3,
    });
  });

  it("should refuse a snapshot naming another thread's summary, and store one naming a summary a redaction made stale as stale", async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const { thread, summaryA } = await threadWithPassword(store);
    const other = await store.createThread();
    await store.appendMessage(other.id, { id: 'o-1', role: 'user', parts: [text('elsewhere')] });
    const snapshot = { includedSequences: [], policyVersion: 'p1', messagesHash: 'h' };
    const foreign = await store
      .writeSnapshot(other.id, { ...snapshot, expectedVersion: 0, throughSequence: 1, summaryId: summaryA.id })
      .catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(NotFoundError);
    expect((foreign as NotFoundError).message).toContain(summaryA.id);
    expect(await readSnapshots(other.id)).toEqual([]);

    // The engine read summary A, then a redaction made it stale before the engine wrote its snapshot.
    await store.redactMessage(thread.id, 'm-2', { actor: 'admin', reason: 'pii' });
    const late = await store.writeSnapshot(thread.id, {
      ...snapshot,
      expectedVersion: 2,
      throughSequence: 5,
      summaryId: summaryA.id,
    });
    expect(late.version).toBe(3);
    expect(await readSnapshots(thread.id)).toEqual([
      { version: 1, stale: false },
      { version: 2, stale: true },
      { version: 3, stale: true },
    ]);
    // Loading never pairs a boundary with a summary that is gone: the stale snapshot is not used.
    const view = await store.loadContext(thread.id);
    expect([view.snapshot?.version, view.summary]).toEqual([1, null]);
  });

  it('should raise a typed error for bad input and change nothing', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const { thread } = await threadWithPassword(store, KEPT_PASSWORD);
    await expect(store.redactMessage(thread.id, 'ghost', { actor: 'a', reason: 'r' })).rejects.toThrow(NotFoundError);
    await expect(store.redactMessage(randomUUID(), 'm-2', { actor: 'a', reason: 'r' })).rejects.toThrow(NotFoundError);
    await expect(store.redactMessage(thread.id, 'm-2', { actor: '', reason: 'r' })).rejects.toThrow(
      'Invalid options.actor "": expected a non-empty string.',
    );
    await expect(store.redactMessage(thread.id, 'm-2', { actor: 'a', reason: '' })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(store.redactMessage(thread.id, 'm-2', { spans: [], actor: 'a', reason: 'r' })).rejects.toThrow(
      /Invalid options\.spans \[\]/,
    );
    await expect(
      store.redactMessage(thread.id, 'm-2', { spans: ['is'], replacement: 'this', actor: 'a', reason: 'r' }),
    ).rejects.toThrow('Invalid options.replacement "this": must not contain a span it replaces.');
    expect(await findEverywhere(KEPT_PASSWORD)).toEqual({ agent_message: 1, agent_summary: 1 });
    expect(await readMessage(thread.id, 'm-2')).toMatchObject({
      context_state: 'eligible',
      content_version: 1,
      redacted_at: null,
    });
    expect(await readAudit(thread.id)).toEqual([]);
  });
});
