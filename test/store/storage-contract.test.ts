import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  migrate,
  MIGRATIONS_FOLDER,
  NotFoundError,
  type AgentHistoryDatabase,
} from '../../src/index.js';
import { statementsThatDoNotRoute } from '../support/statement-routing.js';
import { CONTRACT_BACKENDS, itOffCitus, openTestDatabase, type TestDatabase } from '../support/test-database.js';

// Seed 004's storage contract (load / append / snapshot) and seed 000's replay and fork guarantees.
const userMessage = (id: string, text: string) => ({
  id,
  role: 'user' as const,
  parts: [{ type: 'text', text }],
  metadata: { sentAt: '2026-01-01T10:00:00Z' },
});
const assistantMessage = (id: string, text: string) => ({
  id,
  role: 'assistant' as const,
  parts: [
    { type: 'step-start' },
    { type: 'reasoning', text: 'thinking', state: 'done' },
    { type: 'text', text, state: 'done' },
  ],
  metadata: { model: 'gpt-4o', usage: { inputTokens: 12, outputTokens: 3 } },
});
const toolRoundTrip = {
  id: 'a-tool',
  role: 'assistant' as const,
  parts: [
    { type: 'step-start' },
    {
      type: 'tool-weather',
      toolCallId: 'call-1',
      state: 'output-available',
      input: { city: 'Paris' },
      output: { tempC: 18, sky: ['clear'] },
    },
    { type: 'step-start' },
    { type: 'text', text: 'It is 18C in Paris.', state: 'done' },
  ],
};
const snapshotInput = (
  expectedVersion: number,
  throughSequence: number,
  messagesHash = `hash-${expectedVersion + 1}`,
) => ({
  expectedVersion,
  throughSequence,
  includedSequences: [],
  policyVersion: 'policy-1',
  messagesHash,
});
/** The columns a message row is made of, without the row's own identity and thread. */
const CONTENT_COLUMNS = `sequence, message_id, role, status, parts, metadata, context_state, exclusion_reason, pinned, schema_version,
  content_version, byte_size, token_count, token_counter_id, created_at, completed_at, redacted_at, deleted_at`;

describe.each(CONTRACT_BACKENDS)('storage contract on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(backend);
  });
  afterAll(() => database.close());

  const store = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());

  describe('load', () => {
    it('should load an empty thread as no snapshot, no summary and an empty tail', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      expect(await tenant.loadContext(thread.id)).toMatchObject({
        thread: { id: thread.id, messageCount: 0 },
        snapshot: null,
        summary: null,
        latestSummary: null,
        tail: [],
        tailTruncated: false,
        currentVersion: 0,
      });
    });

    it('should refuse an unknown, malformed or soft-deleted thread with NotFoundError', async () => {
      const tenant = store();
      const unknown = randomUUID();
      await expect(tenant.loadContext(unknown)).rejects.toThrow(`The thread "${unknown}" was not found.`);
      await expect(tenant.loadContext('thread-1')).rejects.toThrow(NotFoundError);
      const thread = await tenant.createThread();
      await tenant.softDeleteThread(thread.id);
      await expect(tenant.loadContext(thread.id)).rejects.toThrow(NotFoundError);
    });

    it('should load a two-message turn in order, with roles, parts and metadata exactly as appended', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const sequences = [
        (await tenant.appendMessage(thread.id, userMessage('u1', 'Hi there'))).stored.sequence,
        (await tenant.appendMessage(thread.id, assistantMessage('a1', 'Hello!'))).stored.sequence,
      ];
      expect(sequences).toEqual([1, 2]);
      const view = await tenant.loadContext(thread.id);
      expect(view.tail.map((stored) => stored.message)).toEqual([
        userMessage('u1', 'Hi there'),
        assistantMessage('a1', 'Hello!'),
      ]);
      expect(view.tail.map((stored) => [stored.sequence, stored.status, stored.contextState])).toEqual([
        [1, 'completed', 'eligible'],
        [2, 'completed', 'eligible'],
      ]);
      const rows = await database.admin.query(
        'select sequence::int as sequence, role, parts from agent_message where thread_id = $1 order by sequence',
        [thread.id],
      );
      expect(rows).toEqual([
        { sequence: 1, role: 'user', parts: userMessage('u1', 'Hi there').parts },
        { sequence: 2, role: 'assistant', parts: assistantMessage('a1', 'Hello!').parts },
      ]);
    });

    it('should load a tool round trip with the call, its input and its output intact', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      await tenant.appendMessage(thread.id, userMessage('u1', 'Weather in Paris?'));
      await tenant.appendMessage(thread.id, toolRoundTrip);
      await tenant.appendMessage(thread.id, userMessage('u2', 'Thanks'));
      const view = await tenant.loadContext(thread.id);
      expect(view.tail.map((stored) => stored.message)).toEqual([
        userMessage('u1', 'Weather in Paris?'),
        toolRoundTrip,
        userMessage('u2', 'Thanks'),
      ]);
      const [row] = await database.admin.query(
        `select parts->1 as tool from agent_message where thread_id = $1 and sequence = 2`,
        [thread.id],
      );
      expect(row).toEqual({ tool: toolRoundTrip.parts[1] });
    });
  });

  // The snapshot guarantees (tail after the inclusive boundary, versions never overwritten, boundary checks) are
  // the ContextStore contract: test/model/context-store-contract.ts. What follows is the store's own view.
  describe('snapshot', () => {
    it("should load the snapshot's own summary with it, and none for a snapshot without one", async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      for (const index of [1, 2]) {
        await tenant.appendMessage(thread.id, userMessage(`u${index}`, `question ${index}`));
        await tenant.appendMessage(thread.id, assistantMessage(`a${index}`, `answer ${index}`));
      }
      const summary = await tenant.writeSummary(thread.id, {
        fromSequence: 1,
        throughSequence: 2,
        content: 'The user asked question 1.',
        tokenCount: 6,
        policyVersion: 'policy-1',
      });
      const first = await tenant.writeSnapshot(thread.id, {
        ...snapshotInput(0, 2),
        summaryId: summary.id,
        includedSequences: [3, 4],
      });
      let view = await tenant.loadContext(thread.id);
      expect([view.snapshot?.id, view.summary?.id, view.currentVersion]).toEqual([first.id, summary.id, 1]);
      await tenant.writeSnapshot(thread.id, snapshotInput(1, 4));
      view = await tenant.loadContext(thread.id);
      expect([view.snapshot?.throughSequence, view.snapshot?.version, view.summary, view.tail]).toEqual([
        4,
        2,
        null,
        [],
      ]);
    });
  });

  describe('replay and fork (seed 000)', () => {
    it('should give identical rows when the same appends are replayed with their client request ids', async () => {
      const tenant = store();
      const thread = await tenant.createThread();
      const script = [
        userMessage('u1', 'Weather?'),
        toolRoundTrip,
        userMessage('u2', 'And tomorrow?'),
        assistantMessage('a2', 'Rain.'),
      ];
      const play = async () => {
        const results = [];
        for (const [index, message] of script.entries())
          results.push(await tenant.appendMessage(thread.id, message, { clientRequestId: `request-${index}` }));
        return results;
      };
      const readAll = () =>
        database.admin.query('select * from agent_message where thread_id = $1 order by sequence', [thread.id]);
      const first = await play();
      const rowsAfterFirst = await readAll();
      const replay = await play();
      expect(first.map((result) => [result.created, result.stored.sequence])).toEqual([
        [true, 1],
        [true, 2],
        [true, 3],
        [true, 4],
      ]);
      expect(replay.map((result) => [result.created, result.stored.sequence, result.stored.rowId])).toEqual(
        first.map((result) => [false, result.stored.sequence, result.stored.rowId]),
      );
      expect(replay.map((result) => result.stored.message)).toEqual(script);
      expect(await readAll()).toEqual(rowsAfterFirst);
      expect((await tenant.getThread(thread.id)).messageCount).toBe(4);
    });

    it('should fork at a sequence into identical rows 1..k, leaving the source untouched', async () => {
      const tenant = store();
      const source = await tenant.createThread({ title: 'Source' });
      await tenant.appendMessage(source.id, userMessage('u1', 'Weather?'));
      await tenant.appendMessage(source.id, toolRoundTrip, { pinned: true });
      await tenant.appendMessage(source.id, userMessage('u2', 'Nope'));
      await tenant.excludeMessages(source.id, ['u2'], { reason: 'superseded-by-edit' });
      await tenant.appendMessage(source.id, userMessage('u3', 'Tomorrow?'));
      const sourceBefore = await database.admin.query(
        `select * from agent_message where thread_id = $1 order by sequence`,
        [source.id],
      );
      const fork = await tenant.forkThread(source.id, { atSequence: 3 });
      const contentOf = (threadId: string) =>
        database.admin.query(`select ${CONTENT_COLUMNS} from agent_message where thread_id = $1 order by sequence`, [
          threadId,
        ]);
      expect(await contentOf(fork.id)).toEqual((await contentOf(source.id)).slice(0, 3));
      const again = await tenant.forkThread(source.id, { atSequence: 3 });
      expect(await contentOf(again.id)).toEqual(await contentOf(fork.id));
      expect(
        await database.admin.query(`select * from agent_message where thread_id = $1 order by sequence`, [source.id]),
      ).toEqual(sourceBefore);
      expect(
        (await tenant.loadContext(fork.id)).tail.map((stored) => [
          stored.message.id,
          stored.contextState,
          stored.pinned,
        ]),
      ).toEqual([
        ['u1', 'eligible', false],
        ['a-tool', 'eligible', true],
        ['u2', 'excluded', false],
      ]);
    });
  });

  // The Citus section's claim, on every statement this block's tests made the store send.
  if (backend !== 'pglite') {
    itOffCitus('should have sent only statements that route to one tenant (pg_stat_statements)', async () => {
      const { checked, problems } = await statementsThatDoNotRoute(database);
      expect(checked).toBeGreaterThan(10);
      expect(problems).toEqual([]);
    });
  }
});

describe('storage contract on a file-backed PGlite database', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-reopen-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  const open = async () => {
    const client = await PGlite.create({ dataDir: folder });
    return { client, db: drizzle({ client }) as unknown as AgentHistoryDatabase };
  };
  const appliedMigrations = async (client: PGlite) =>
    (
      await client.query<{ hash: string }>('select hash from agent_history.__agent_history_migrations order by id')
    ).rows.map((row) => row.hash);

  it('should read back what was written after a close and reopen, and treat a second migrate as a no-op', async () => {
    const shipped = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).map((migration) => migration.hash);
    const tenantId = randomUUID();
    const first = await open();
    await migrate(first.db);
    expect(await appliedMigrations(first.client)).toEqual(shipped);
    const writer = createAgentHistory({ db: first.db }).forTenant(tenantId);
    const thread = await writer.createThread({ title: 'Durable' });
    await writer.appendMessage(thread.id, userMessage('u1', 'Weather?'));
    await writer.appendMessage(thread.id, toolRoundTrip);
    await writer.writeSnapshot(thread.id, snapshotInput(0, 1));
    const written = await writer.loadContext(thread.id);
    await first.client.close();

    const second = await open();
    try {
      await migrate(second.db);
      expect(await appliedMigrations(second.client)).toEqual(shipped);
      const reader = createAgentHistory({ db: second.db }).forTenant(tenantId);
      expect(await reader.loadContext(thread.id)).toEqual(written);
      expect(written.tail.map((stored) => stored.message)).toEqual([toolRoundTrip]);
      expect((await reader.appendMessage(thread.id, userMessage('u2', 'Thanks'))).stored.sequence).toBe(3);
      await expect(
        createAgentHistory({ db: second.db }).forTenant(randomUUID()).loadContext(thread.id),
      ).rejects.toThrow(NotFoundError);
    } finally {
      await second.client.close();
    }
    // Two opens of a file-backed database (the first runs initdb) are slow on a loaded machine.
  }, 180_000);
});
