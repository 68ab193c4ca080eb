import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import postgres from 'postgres';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, InvalidMessageError, NotFoundError } from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

/** Text built to end a literal early or be read as an escape, whatever `standard_conforming_strings` says. */
const hostile = (maxLength: number) =>
  fc
    .array(
      fc.oneof(
        fc.constantFrom("'", "''", '\\', "\\'", "E'", '$', '$$', '$a$', '$a', '$a0$', '\u2028', '\u2029', '--', ';'),
        fc.constantFrom('\n', '\r', '\t', '"', 'é', '😀', '\u200d', '\ufeff', ')', '::text', ' or true'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }),
      ),
      { minLength: 1, maxLength: 16 },
    )
    .map((pieces) => pieces.join('').slice(0, maxLength))
    .filter((value) => value.length > 0 && value.isWellFormed() && !value.includes('\u0000'));

// SQL built from literals: the user id reaches the one-statement reads as an E'' literal and the
// appends as a dollar-quoted one; a pooled connection on which someone turned `standard_conforming_strings` off
// must neither break a statement nor let one user's scope read another's (ids differing by a quote or backslash).
describe.each(BACKENDS)('literals on a connection without standard_conforming_strings on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should store and scope any user id, message id and text exactly, and show them to no other user', async () => {
    // One connection, so that every store statement runs with the setting off.
    const own = backend === 'postgres' ? postgres(database.appUrl!, { max: 1, onnotice: () => {} }) : null;
    const db = own ? (drizzlePostgres({ client: own }) as unknown as AgentHistoryDatabase) : database.db;
    const off = `set standard_conforming_strings = off`;
    await (own ? own.unsafe(off) : database.admin.query(off));
    try {
      const history = createAgentHistory({ db, appendBatching: false });
      await fc.assert(
        fc.asyncProperty(hostile(200), hostile(200), hostile(400), async (userId, messageId, body) => {
          const tenantId = randomUUID();
          // Refused on every backend: PGlite would read such an id back without its byte-order mark.
          if (userId.startsWith('\uFEFF')) {
            expect(() => history.forTenant(tenantId, { userId })).toThrow(InvalidArgumentError);
            return;
          }
          if (messageId.startsWith('\uFEFF')) messageId = `m${messageId}`;
          // PGlite drops a leading U+FEFF from every text column it reads (docs/postgres.md, "Running on
          // PostgreSQL"): kept in the middle only.
          if (backend === 'pglite' && body.startsWith('\uFEFF')) body = `b${body}`.slice(0, 400);
          const user = history.forTenant(tenantId, { userId });
          const thread = await user.createThread({ title: body });
          const message = { id: messageId, role: 'user' as const, parts: [{ type: 'text' as const, text: body }] };
          await user.appendMessage(thread.id, message, { clientRequestId: body.slice(0, 200) });
          const page = await user.listMessages(thread.id);
          expect(page.messages.map((stored) => stored.message)).toEqual([message]);
          expect(page.messages[0]!.clientRequestId).toBe(body.slice(0, 200));
          const context = await user.loadContext(thread.id);
          expect(context.thread.userId).toBe(userId);
          expect(context.thread.title).toBe(body);
          // Users whose ids differ from this one by a quote, a backslash or a prefix see nothing of it.
          for (const other of [`${userId}'`, `${userId}\\`, `'${userId}`, Array.from(userId).slice(0, -1).join('')]) {
            if (other.length === 0 || other.length > 200 || other === userId) continue;
            const stranger = history.forTenant(tenantId, { userId: other });
            await expect(stranger.listMessages(thread.id)).rejects.toBeInstanceOf(NotFoundError);
            await expect(stranger.loadContext(thread.id)).rejects.toBeInstanceOf(NotFoundError);
            expect((await stranger.listThreads()).threads).toEqual([]);
          }
          const tenant = history.forTenant(tenantId);
          expect((await tenant.getThread(thread.id)).userId).toBe(userId);
        }),
        { numRuns: 40 },
      );
      const [setting] = own
        ? await own.unsafe(`show standard_conforming_strings`)
        : await database.admin.query(`show standard_conforming_strings`);
      expect(Object.values(setting!)).toEqual(['off']);
    } finally {
      await (own ? own.end() : database.admin.query(`set standard_conforming_strings = on`));
    }
  });

  it('should refuse a user id or message id starting with U+FEFF, which PGlite reads back as another', async () => {
    const history = createAgentHistory({ db: database.db });
    const tenantId = randomUUID();
    const tenant = history.forTenant(tenantId);
    // Before: on PGlite the thread of '\uFEFFbob' read back as bob's, and its fork went to bob.
    expect(() => history.forTenant(tenantId, { userId: '\uFEFFbob' })).toThrow(InvalidArgumentError);
    await expect(tenant.createThread({ userId: '\uFEFFbob' })).rejects.toBeInstanceOf(InvalidArgumentError);
    const thread = await tenant.createThread({ userId: 'alice' });
    await expect(tenant.forkThread(thread.id, { atSequence: 0, userId: '\uFEFFbob' })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(tenant.listThreads({ userId: '\uFEFFbob' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(tenant.searchMessages('x', { userId: '\uFEFFbob' })).rejects.toBeInstanceOf(InvalidArgumentError);
    const message = { id: '\uFEFFm', role: 'user' as const, parts: [{ type: 'text' as const, text: 'hi' }] };
    await expect(tenant.appendMessage(thread.id, message)).rejects.toBeInstanceOf(InvalidMessageError);
    expect((await tenant.listThreads()).threads.map((row) => row.id)).toEqual([thread.id]);
    expect((await tenant.listMessages(thread.id)).messages).toEqual([]);
    // A byte-order mark anywhere else is kept exactly.
    const inside = await tenant.createThread({ userId: 'b\uFEFFob' });
    expect((await tenant.getThread(inside.id)).userId).toBe('b\uFEFFob');
  });
});
