import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { MIGRATIONS_FOLDER } from '../../src/store/migrate.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { text } from '../support/fixtures.js';

/** The data statements of migration 0010 (after its DDL): the backfill of forks made before it. */
function backfillStatements(): string[] {
  const file = readFileSync(join(MIGRATIONS_FOLDER, '0010_fork_lineage.sql'), 'utf8');
  return file
    .split('--> statement-breakpoint')
    .map((statement) => statement.trim())
    .filter((statement) => !/^(ALTER TABLE "\w+" ADD COLUMN|CREATE INDEX)/.test(statement));
}

describe.each(BACKENDS)('migration 0010 on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should give the forks made before it the lineage forkThread records now, as far as their parents remain', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const root = await store.createThread();
    for (const id of ['m-1', 'm-2', 'm-3'])
      await store.appendMessage(root.id, { id, role: 'user', parts: [text(`text of ${id}`)] });
    const child = await store.forkThread(root.id, { atSequence: 3 });
    await store.forkThread(child.id, { atSequence: 2 });
    const sibling = await store.forkThread(root.id, { atSequence: 1 });
    await store.appendMessage(sibling.id, { id: 'm-2', role: 'user', parts: [text('not a copy')] });
    const orphanParent = await store.createThread();
    await store.appendMessage(orphanParent.id, { id: 'm-1', role: 'user', parts: [text('lost')] });
    const orphan = await store.forkThread(orphanParent.id, { atSequence: 1 });
    const lineage = async () =>
      database.admin.query<{ id: string; thread_id: string; source: string; root: string | null }>(
        `select m.id::text, m.thread_id, coalesce(m.source_message_id, m.id)::text as source, t.root_thread_id::text as root
         from agent_message m join agent_thread t on t.tenant_id = m.tenant_id and t.id = m.thread_id
         where m.tenant_id = $1 order by m.thread_id, m.sequence`,
        [store.tenantId],
      );
    const recorded = await lineage();
    // The rows as an older version left them: no lineage; and one parent deleted before the upgrade.
    await database.admin.query('update agent_message set source_message_id = null where tenant_id = $1', [
      store.tenantId,
    ]);
    await database.admin.query('update agent_thread set root_thread_id = null where tenant_id = $1', [store.tenantId]);
    await store.deleteThread(orphanParent.id);

    for (const statement of backfillStatements()) await database.admin.query(statement);

    const backfilled = await lineage();
    const forced = await database.admin.query<{ relname: string; relforcerowsecurity: boolean }>(
      "select relname, relforcerowsecurity from pg_class where relname in ('agent_message', 'agent_thread') order by 1",
    );
    expect(forced.map((row) => row.relforcerowsecurity)).toEqual([true, true]);
    const others = (rows: typeof recorded) => rows.filter((row) => row.thread_id !== orphan.id);
    expect(others(backfilled)).toEqual(others(recorded.filter((row) => row.thread_id !== orphanParent.id)));
    // The orphan's parent is gone: its copy cannot be traced and stands for itself; its family root is the parent's id.
    const [orphanCopy] = backfilled.filter((row) => row.thread_id === orphan.id);
    expect(orphanCopy).toEqual({
      id: orphanCopy!.id,
      thread_id: orphan.id,
      source: orphanCopy!.id,
      root: orphanParent.id,
    });
  });
});
