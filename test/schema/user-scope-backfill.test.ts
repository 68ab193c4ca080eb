import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { PgDialect, PgSession } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, migrate, NotFoundError } from '../../src/index.js';
import { MIGRATIONS_FOLDER } from '../../src/store/migrate.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { TABLES } from '../support/tables.js';

/** Applies the shipped migrations before `firstMissing` (its tag prefix), as an installation that stopped there. */
async function migrateBefore(db: AgentHistoryDatabase, firstMissing: string) {
  const config = {
    migrationsFolder: MIGRATIONS_FOLDER,
    migrationsTable: '__agent_history_migrations',
    migrationsSchema: 'agent_history',
  };
  const files = readMigrationFiles(config);
  const { entries } = (await import('../../drizzle/meta/_journal.json', { with: { type: 'json' } })).default;
  const stop = entries.findIndex((entry) => entry.tag.startsWith(firstMissing));
  const internals = db as unknown as { dialect: PgDialect; session: PgSession };
  await internals.dialect.migrate(files.slice(0, stop), internals.session, config);
}

describe('migrations 0011 and 0012 on an installation with rows', () => {
  it("should give every existing row its thread's user, so the user scope shows the user all of it and others none", async () => {
    const client = await PGlite.create();
    const db = drizzle({ client }) as unknown as AgentHistoryDatabase;
    try {
      await migrateBefore(db, '0011');
      const tenantId = randomUUID();
      const [thread, threadless] = [randomUUID(), randomUUID()];
      // Rows as the store wrote them before 0011 (no user_id anywhere but the thread), as the owner.
      await client.exec(`
        insert into agent_thread (tenant_id, id, user_id, next_sequence) values
          ('${tenantId}', '${thread}', 'alice', 1), ('${tenantId}', '${threadless}', null, 0);
        insert into agent_run (tenant_id, thread_id) values ('${tenantId}', '${thread}');
        insert into agent_message (tenant_id, thread_id, sequence, message_id, role, parts)
          values ('${tenantId}', '${thread}', 1, 'u1', 'user', '[{"type":"text","text":"old"}]');
        insert into agent_summary (tenant_id, thread_id, from_sequence, through_sequence, content, token_count, policy_version)
          values ('${tenantId}', '${thread}', 1, 1, 's', 1, 'p');
        insert into agent_context_snapshot (tenant_id, thread_id, version, through_sequence, included_sequences, policy_version, messages_hash)
          values ('${tenantId}', '${thread}', 1, 1, '[]', 'p', 'h');
        insert into agent_audit_event (tenant_id, thread_id, action, actor) values
          ('${tenantId}', '${thread}', 'message-excluded', 'x'), ('${tenantId}', '${randomUUID()}', 'thread-deleted', 'x');
      `);
      await migrate(db);

      const owners: Record<string, unknown[]> = {};
      for (const table of TABLES)
        owners[table] = (
          await client.query(`select user_id from ${table} where tenant_id = $1 order by user_id nulls last`, [
            tenantId,
          ])
        ).rows.map((row) => (row as { user_id: string | null }).user_id);
      expect(owners).toEqual({
        agent_thread: ['alice', null],
        agent_run: ['alice'],
        agent_message: ['alice'],
        agent_summary: ['alice'],
        agent_context_snapshot: ['alice'],
        // The event of a thread deleted before the migration has no thread to take a user from.
        agent_audit_event: ['alice', null],
        // Created by a later migration (0014): no rows from before it.
        agent_stream_chunk: [],
      });
      const history = createAgentHistory({ db });
      const alice = history.forTenant(tenantId, { userId: 'alice' });
      const bob = history.forTenant(tenantId, { userId: 'bob' });
      const view = await alice.loadContext(thread);
      const messages = (await alice.listMessages(thread)).messages.length;
      expect([messages, view.latestSummary?.content, view.snapshot?.version]).toEqual([1, 's', 1]);
      expect(
        (await alice.appendMessage(thread, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'new' }] })).stored
          .sequence,
      ).toBe(2);
      await expect(bob.getThread(thread)).rejects.toBeInstanceOf(NotFoundError);
      await expect(alice.getThread(threadless)).rejects.toBeInstanceOf(NotFoundError);
      expect((await history.forTenant(tenantId).listThreads()).threads).toHaveLength(2);
    } finally {
      await client.close();
    }
  });
});
