import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateStoredMessages } from '../../src/context/stages/validate-stored-messages.js';
import {
  createAgentHistory,
  CURRENT_MESSAGE_SCHEMA_VERSION,
  InvalidArgumentError,
  type MessageMigrationBatch,
  type MessageMigrationCursor,
  type TenantHistory,
} from '../../src/index.js';
import { agentMessage } from '../../src/schema/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { text, userMessage } from '../support/fixtures.js';

/** An AI SDK v4 assistant message's parts: its tool call is a `tool-invocation` part. */
const V4_PARTS = [
  { type: 'step-start' },
  {
    type: 'tool-invocation',
    toolInvocation: { state: 'result', toolCallId: 'call-v4', toolName: 'weather', args: { city: 'Oslo' }, result: 3 },
  },
  { type: 'text', text: 'It is 3°C.' },
];
/** The same parts in today's (v7) shape. */
const V7_PARTS = [
  { type: 'step-start' },
  { type: 'tool-weather', toolCallId: 'call-v4', state: 'output-available', input: { city: 'Oslo' }, output: 3 },
  { type: 'text', text: 'It is 3°C.' },
];

describe.each(BACKENDS)('message-shape versions on %s', (backend) => {
  const database = useTestDatabase(backend, { poolSize: 8 });
  const store = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());

  /** Writes an old row as the owner: v4 parts, schema_version 1, as a release before the registry left it. */
  async function writeOldRow(history: TenantHistory, threadId: string, id: string): Promise<void> {
    await history.appendMessage(threadId, { id, role: 'assistant', parts: [text('placeholder')] });
    await database.admin.query(
      `update agent_message set parts = $1::text::json, schema_version = 1, token_count = 7, token_counter_id = 'x'
       where thread_id = $2 and message_id = $3`,
      [JSON.stringify(V4_PARTS), threadId, id],
    );
  }
  const rowsOf = (threadId: string) =>
    database.admin.query<{
      message_id: string;
      sequence: string;
      schema_version: number;
      content_version: number;
      parts: unknown;
    }>(
      'select message_id, sequence::text, schema_version, content_version, parts from agent_message where thread_id = $1 order by agent_message.sequence',
      [threadId],
    );

  it('should write new rows with the current version (the column default)', async () => {
    expect(agentMessage.schemaVersion.default).toBe(CURRENT_MESSAGE_SCHEMA_VERSION);
    const history = store();
    const thread = await history.createThread();
    const { stored } = await history.appendMessage(thread.id, userMessage('u-1'));
    expect(stored.schemaVersion).toBe(CURRENT_MESSAGE_SCHEMA_VERSION);
    expect((await rowsOf(thread.id))[0]!.schema_version).toBe(CURRENT_MESSAGE_SCHEMA_VERSION);
  });

  it('should store an older shape that passes the append checks migrated, so a current row is in the current shape', async () => {
    const history = store();
    const thread = await history.createThread();
    const v4File = { type: 'file', mimeType: 'text/plain', data: 'aGk=' };
    await history.appendMessage(thread.id, { id: 'u-1', role: 'user', parts: [v4File as never] });
    const [row] = await rowsOf(thread.id);
    expect(row).toMatchObject({
      schema_version: 2,
      parts: [{ type: 'file', mediaType: 'text/plain', url: 'data:text/plain;base64,aGk=' }],
    });
  });

  it('should read an old row migrated through listMessages, loadContext and the engine', async () => {
    const history = store();
    const thread = await history.createThread();
    await history.appendMessage(thread.id, userMessage('u-1'));
    await writeOldRow(history, thread.id, 'a-1');

    const listed = (await history.listMessages(thread.id)).messages.find((row) => row.message.id === 'a-1')!;
    expect(listed.message.parts).toEqual(V7_PARTS);
    expect(listed).toMatchObject({ schemaVersion: 2, storedSchemaVersion: 1, tokenCount: null, tokenCounterId: null });
    expect((await history.getMessage(thread.id, 'a-1'))?.message.parts).toEqual(V7_PARTS);

    const loaded = await history.loadContext(thread.id);
    expect(JSON.stringify(loaded)).toContain('"type":"tool-weather"');
    expect(JSON.stringify(loaded)).not.toContain('tool-invocation');

    // The engine migrates by the version it is given, whatever store the rows come from.
    const { messages, report } = validateStoredMessages({
      messages: [{ ...listed, message: { ...listed.message, parts: V4_PARTS as never }, schemaVersion: 1 }],
    });
    expect(messages[0]!.message.parts).toEqual(V7_PARTS);
    expect(report.migrated).toEqual([{ sequence: 2, migration: 'tool-invocation-to-tool-part' }]);
  });

  it('should migrate old rows in place in batches with a cursor, and change nothing on a second run', async () => {
    const history = store();
    const threads = [await history.createThread(), await history.createThread()];
    for (const thread of threads) {
      await history.appendMessage(thread.id, userMessage(`u-${thread.id}`));
      for (const index of [1, 2]) await writeOldRow(history, thread.id, `a-${index}`);
    }
    // A v7 row stored as version 1 (the column's old default) is only marked.
    await database.admin.query('update agent_message set schema_version = 1 where thread_id = $1 and sequence = 1', [
      threads[0]!.id,
    ]);
    const redacted = await history.createThread();
    await writeOldRow(history, redacted.id, 'a-secret');
    await history.redactMessage(redacted.id, 'a-secret', { actor: 'test', reason: 'test' });
    const redactedBefore = await rowsOf(redacted.id);

    const batches: MessageMigrationBatch[] = [];
    let after: MessageMigrationCursor | null = null;
    do {
      const batch = await history.migrateStoredMessages({ batchSize: 2, after });
      batches.push(batch);
      after = batch.next;
    } while (after);
    const total = (key: 'rewritten' | 'marked' | 'skipped') => batches.reduce((sum, batch) => sum + batch[key], 0);
    expect(batches.length).toBeGreaterThan(1);
    expect({ rewritten: total('rewritten'), marked: total('marked'), skipped: total('skipped') }).toEqual({
      rewritten: 4,
      marked: 1,
      skipped: 1,
    });
    for (const thread of threads) {
      const rows = await rowsOf(thread.id);
      expect(rows.map((row) => row.schema_version)).toEqual([2, 2, 2]);
      // content_version: 1 as appended, 2 for the old parts writeOldRow put in (the content version trigger raises it on any
      // change of parts), 3 for the migration's rewrite: exactly one.
      expect(rows.slice(1).map((row) => [row.parts, row.content_version])).toEqual([
        [V7_PARTS, 3],
        [V7_PARTS, 3],
      ]);
    }
    expect(await rowsOf(redacted.id)).toEqual(redactedBefore);

    const before = [...(await rowsOf(threads[0]!.id)), ...(await rowsOf(threads[1]!.id))];
    const again = await history.migrateStoredMessages({ batchSize: 2 });
    expect(again).toEqual({ rewritten: 0, marked: 0, skipped: 1, next: null });
    expect([...(await rowsOf(threads[0]!.id)), ...(await rowsOf(threads[1]!.id))]).toEqual(before);
  });

  it('should keep sequences gapless for appends racing the migration', async () => {
    const history = store();
    const other = createAgentHistory({ db: database.db }).forTenant(history.tenantId);
    const thread = await history.createThread();
    for (const index of [1, 2, 3, 4, 5, 6]) await writeOldRow(history, thread.id, `a-${index}`);
    const migrate = async () => {
      let after: MessageMigrationCursor | null = null;
      do after = (await history.migrateStoredMessages({ batchSize: 1, after })).next;
      while (after);
    };
    await Promise.all([
      migrate(),
      ...[1, 2, 3, 4, 5, 6].map((index) => other.appendMessage(thread.id, userMessage(`u-${index}`))),
    ]);
    const rows = await rowsOf(thread.id);
    expect(rows.map((row) => Number(row.sequence))).toEqual(Array.from({ length: 12 }, (_, index) => index + 1));
    expect(rows.every((row) => row.schema_version === 2)).toBe(true);
    expect(rows.filter((row) => JSON.stringify(row.parts).includes('tool-invocation'))).toEqual([]);
  });

  it("should never read or change another tenant's rows (run as the app login, under row-level security)", async () => {
    const victim = store();
    const thread = await victim.createThread();
    await writeOldRow(victim, thread.id, 'a-1');
    const before = await rowsOf(thread.id);
    expect(await store().migrateStoredMessages({ batchSize: 10 })).toEqual({
      rewritten: 0,
      marked: 0,
      skipped: 0,
      next: null,
    });
    expect(await rowsOf(thread.id)).toEqual(before);
  });

  it('should refuse a bad batch size or cursor with a typed error naming it', async () => {
    const history = store();
    await expect(history.migrateStoredMessages({ batchSize: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(history.migrateStoredMessages({ after: { threadId: 'nope', sequence: 1 } })).rejects.toThrow(
      /options\.after\.threadId "nope"/,
    );
  });
});
