// A conversation's content is compressed with lz4 where the server has it (PostgreSQL 15 from Debian does, PGlite
// does not): what each content column is set to, what a stored value was compressed with, and that every kind of
// value (compressible, incompressible, past the TOAST threshold or not) reads back exactly.
import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const CONTENT_COLUMNS = [
  ['agent_message', 'parts'],
  ['agent_stream_chunk', 'chunks'],
  ['agent_summary', 'content'],
  ['agent_tool_payload', 'content'],
] as const;

describe.each(BACKENDS)('content compression on %s', (backend) => {
  const database = useTestDatabase(backend);
  const lz4 = backend === 'postgres';

  it('should set every content column to lz4 where the server has it, and leave the default elsewhere', async () => {
    const [{ methods }] = await database.admin.query<{ methods: string[] }>(
      `select enumvals as methods from pg_settings where name = 'default_toast_compression'`,
    );
    expect(methods.includes('lz4')).toBe(lz4);
    for (const [table, column] of CONTENT_COLUMNS) {
      const [{ method }] = await database.admin.query<{ method: string }>(
        `select attcompression as method from pg_attribute where attrelid = $1::regclass and attname = $2`,
        [table, column],
      );
      expect({ table, column, method }).toEqual({ table, column, method: lz4 ? 'l' : '' });
    }
  });

  it('should store a long message compressed, with lz4 where it can, and read every kind of value back', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    // Repetitive text (compressed), random text (that no method shrinks: stored as it is), and short text.
    const texts = {
      repetitive: 'the same words again '.repeat(2_000),
      random: randomBytes(30_000).toString('base64'),
      short: 'hello',
    };
    for (const [id, text] of Object.entries(texts))
      await store.appendMessage(thread, { id, role: 'user', parts: [{ type: 'text', text }] });
    const stored = await database.admin.query<{ id: string; method: string | null }>(
      `select message_id as id, pg_column_compression(parts) as method from agent_message
        where thread_id = $1 order by sequence`,
      [thread],
    );
    expect(stored).toEqual([
      { id: 'repetitive', method: lz4 ? 'lz4' : 'pglz' },
      { id: 'random', method: null },
      { id: 'short', method: null },
    ]);
    const page = await store.listChatMessages(thread);
    expect(page.messages.map((entry) => entry.message.parts)).toEqual(
      Object.values(texts).map((text) => [{ type: 'text', text }]),
    );
  });

  it('should read back any text of any length exactly, whatever it was compressed with', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    let index = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 3_000 }),
        async (unit, times) => {
          const text = unit.repeat(times);
          const id = `m-${index++}`;
          await store.appendMessage(thread, { id, role: 'user', parts: [{ type: 'text', text }] });
          expect((await store.getMessage(thread, id)).message.parts).toEqual([{ type: 'text', text }]);
        },
      ),
      { numRuns: 40 },
    );
  });
});
