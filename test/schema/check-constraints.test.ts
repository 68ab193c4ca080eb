import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { TABLES } from '../support/tables.js';

interface BadRow {
  table: string;
  set: Record<string, string>;
  /**
   * The SQLSTATE when another part of the row refuses it first: for `parts` that is not an array, the generated
   * `search_vector`'s `strict $[*]` fails (22039) before the CHECK runs. Refused either way.
   */
  refusedFirstBy?: string;
}

/**
 * For each CHECK constraint of the tables, the bad values of one or more columns that it alone refuses. A new
 * CHECK without an entry here fails the first test.
 */
const BAD_ROWS: Record<string, BadRow[]> = {
  agent_thread_next_sequence_nonnegative: [{ table: 'agent_thread', set: { next_sequence: '-1' } }],
  agent_thread_metadata_is_object: [
    { table: 'agent_thread', set: { metadata: `'[]'::jsonb` } },
    { table: 'agent_thread', set: { metadata: `'"text"'::jsonb` } },
  ],
  agent_run_finished_after_started: [
    { table: 'agent_run', set: { finished_at: `started_at - interval '1 millisecond'` } },
  ],
  agent_message_sequence_positive: [
    { table: 'agent_message', set: { sequence: '0' } },
    { table: 'agent_message', set: { sequence: '-5' } },
  ],
  agent_message_parts_is_array: [
    { table: 'agent_message', set: { parts: `'{}'::json` }, refusedFirstBy: '22039' },
    { table: 'agent_message', set: { parts: `'null'::json` }, refusedFirstBy: '22039' },
  ],
  agent_message_metadata_is_object: [{ table: 'agent_message', set: { metadata: `'[1]'::jsonb` } }],
  agent_message_content_version_positive: [{ table: 'agent_message', set: { content_version: '0' } }],
  agent_message_message_id_length: [
    { table: 'agent_message', set: { message_id: `''` } },
    { table: 'agent_message', set: { message_id: `repeat('é', 201)` } },
  ],
  agent_message_client_request_id_length: [
    { table: 'agent_message', set: { client_request_id: `''` } },
    { table: 'agent_message', set: { client_request_id: `repeat('x', 201)` } },
  ],
  agent_summary_range: [
    { table: 'agent_summary', set: { from_sequence: '0' } },
    { table: 'agent_summary', set: { from_sequence: '3', through_sequence: '2' } },
  ],
  agent_context_snapshot_version_positive: [{ table: 'agent_context_snapshot', set: { version: '0' } }],
  agent_context_snapshot_through_nonnegative: [{ table: 'agent_context_snapshot', set: { through_sequence: '-1' } }],
  agent_stream_chunk_batch_nonnegative: [{ table: 'agent_stream_chunk', set: { batch: '-1' } }],
  agent_tool_payload_field: [{ table: 'agent_tool_payload', set: { field: `'parts'` } }],
  agent_tool_payload_chunk_range: [
    { table: 'agent_tool_payload', set: { chunk: '-1' } },
    { table: 'agent_tool_payload', set: { chunk: 'chunk_count' } },
  ],
  agent_tool_payload_part_nonnegative: [{ table: 'agent_tool_payload', set: { part: '-1' } }],
  agent_memory_scope: [{ table: 'agent_memory', set: { scope: `'tenant'` } }],
  agent_memory_kind: [{ table: 'agent_memory', set: { kind: `'note'` } }],
  agent_memory_scope_owner: [
    { table: 'agent_memory', set: { scope: `'user'` } },
    { table: 'agent_memory', set: { thread_id: 'null' } },
  ],
  agent_memory_recall_source: [{ table: 'agent_memory', set: { kind: `'recall'` } }],
  agent_memory_embedding_model: [
    { table: 'agent_memory', set: { embedding: `'{1,2}'` } },
    { table: 'agent_memory', set: { embedding_model: `'m'` } },
  ],
  agent_memory_version_positive: [{ table: 'agent_memory', set: { version: '0' } }],
};

/** What keeps a copied row from colliding with its original on a unique key, so only the CHECK can refuse it. */
const FRESH: Record<string, Record<string, string>> = {
  agent_thread: { id: 'gen_random_uuid()' },
  agent_run: { id: 'gen_random_uuid()' },
  agent_message: {
    id: 'gen_random_uuid()',
    sequence: 'sequence + 1000',
    message_id: `'copy-' || gen_random_uuid()`,
    client_request_id: 'null',
  },
  agent_summary: { id: 'gen_random_uuid()' },
  agent_context_snapshot: { id: 'gen_random_uuid()', version: 'version + 1000' },
  agent_stream_chunk: { batch: 'batch + 1000' },
  agent_tool_payload: { part: 'part + 1000' },
  // A fact, not a second working-memory document of the thread (one per thread).
  agent_memory: { id: 'gen_random_uuid()', kind: `'fact'` },
};

describe.each(BACKENDS)('CHECK constraints on %s, as the tables owner', (backend) => {
  const database = useTestDatabase(backend);
  const rowOf: Record<string, string> = {};
  const columnsOf: Record<string, string[]> = {};

  beforeAll(async () => {
    const tenant = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await tenant.createThread({ metadata: { a: 1 } });
    const run = await tenant.startRun(thread.id, {});
    await tenant.appendMessage(thread.id, { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] });
    await tenant.appendMessage(thread.id, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'again' }] });
    await tenant.appendMessage(thread.id, { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'yes' }] });
    await tenant.appendStreamChunks(thread.id, 'a1', { batch: 0, chunks: [{ type: 'start' }] });
    await tenant.finishRun(run.id, { status: 'completed' });
    // A tool output over maxMessageBytes: kept whole in agent_tool_payload.
    const small = createAgentHistory({ db: database.db, maxMessageBytes: 1024 }).forTenant(tenant.tenantId);
    await small.beginAssistantMessage(thread.id, { messageId: 'a2' });
    await small.finalizeMessage(thread.id, 'a2', {
      status: 'completed',
      parts: [{ type: 'tool-x', toolCallId: 'c', state: 'output-available', input: {}, output: 'x'.repeat(4000) }],
    });
    const summary = await tenant.writeSummary(thread.id, {
      fromSequence: 1,
      throughSequence: 1,
      content: 'hi',
      tokenCount: 1,
      policyVersion: 'p',
    });
    await tenant.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: 1,
      includedSequences: [2],
      policyVersion: 'p',
      messagesHash: 'h',
      summaryId: summary.id,
    });
    await tenant.updateWorkingMemory({ scope: 'thread', threadId: thread.id, content: 'plan', expectedVersion: 0 });
    for (const table of TABLES) {
      // By its ctid: not every table has an id column (the chunk log's key is message and batch).
      const [row] = await database.admin.query<{ id: string }>(
        `select ctid::text as id from ${table} where tenant_id = $1 limit 1`,
        [tenant.tenantId],
      );
      rowOf[table] = row?.id ?? '';
      columnsOf[table] = (
        await database.admin.query<{ name: string }>(
          `select attname as name from pg_attribute where attrelid = $1::regclass and attnum > 0
             and not attisdropped and attgenerated = '' order by attnum`,
          [table],
        )
      ).map(({ name }) => name);
    }
  });

  /** Copies the table's seed row with `set` applied (after the overrides that keep unique keys apart). */
  const insertCopy = (table: string, set: Record<string, string>) => {
    const values = { ...FRESH[table], ...set };
    const columns = columnsOf[table]!;
    return database.admin.query(
      `insert into ${table} (${columns.map((column) => `"${column}"`).join(', ')})
       select ${columns.map((column) => values[column] ?? `"${column}"`).join(', ')} from ${table} where ctid = $1::tid`,
      [rowOf[table]],
    );
  };

  it('should have a bad row here for every CHECK constraint of the tables, and none for a constraint that is gone', async () => {
    const constraints = await database.admin.query<{ name: string }>(
      `select conname as name from pg_constraint where contype = 'c' and conrelid = any($1::regclass[]) order by 1`,
      [[...TABLES]],
    );
    expect(constraints.map(({ name }) => name)).toEqual(Object.keys(BAD_ROWS).sort());
  });

  it('should accept a copy of each seed row with fresh keys (so a refusal below is the CHECK alone)', async () => {
    for (const table of Object.keys(FRESH)) {
      expect(rowOf[table], table).not.toBe('');
      await insertCopy(table, {});
    }
  });

  it.each(Object.entries(BAD_ROWS).flatMap(([name, cases]) => cases.map((bad) => [name, bad] as const)))(
    'should refuse %s: %j',
    async (name, { table, set, refusedFirstBy }) => {
      const [before] = await database.admin.query<{ n: number }>(`select count(*)::int as n from ${table}`);
      const error = await insertCopy(table, set).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, `${table} accepted ${JSON.stringify(set)}`).toBeDefined();
      if (refusedFirstBy !== undefined) {
        expect(error).toMatchObject({ code: refusedFirstBy });
      } else {
        expect(error).toMatchObject({ code: '23514' });
        // postgres-js names the constraint `constraint_name`, PGlite `constraint`.
        const { constraint, constraint_name } = error as { constraint?: string; constraint_name?: string };
        expect(constraint ?? constraint_name).toBe(name);
      }
      const [after] = await database.admin.query<{ n: number }>(`select count(*)::int as n from ${table}`);
      expect(after).toEqual(before);
    },
  );
});
