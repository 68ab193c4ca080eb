import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate as drizzleMigrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createAgentHistory, migrate, MIGRATIONS_FOLDER, type AgentHistoryDatabase } from '../../src/index.js';
import { APP_LOGIN } from '../support/global-setup.js';
import { citusClusterAt, createCitusDatabase, dropCitusDatabase } from '../support/citus-cluster.js';
import { TABLES } from '../support/tables.js';
import { docsDistributionSql } from './support/citus-test-database.js';

/** The statements of docs/citus.md's distribution block, one by one (comments and the blank ones left out). */
const distributionStatements = () =>
  docsDistributionSql()
    .split(/;\s*\n/)
    .map((statement) => statement.replace(/^--.*$/gm, '').trim())
    .filter((statement) => statement.length > 0);

describe('Citus: upgrading a distributed 1.0 database to memory', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-citus-upgrade-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('should apply the new migrations to distributed 1.0 tables, then distribute agent_memory with the line the docs add', async () => {
    const cluster = citusClusterAt(inject('citusServerUrls'));
    const name = `t_${randomUUID().replaceAll('-', '')}`;
    await createCitusDatabase(cluster, name);
    const admin = postgres(cluster.coordinator.url(name), { max: 1, onnotice: () => {} });
    const app = postgres(cluster.coordinator.url(name).replace('postgres://postgres@', `postgres://${APP_LOGIN}@`), {
      max: 2,
      onnotice: () => {},
    });
    try {
      // The 1.0 baseline (the first three journal entries), distributed as the 1.0 docs said: the block without the
      // new table's line.
      cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
      const journalPath = join(folder, 'meta/_journal.json');
      const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: unknown[] };
      writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, 3) }));
      await drizzleMigrate(drizzle({ client: admin }), {
        migrationsFolder: folder,
        migrationsTable: '__agent_history_migrations',
        migrationsSchema: 'agent_history',
      });
      const newTable = (statement: string) => statement.includes("'agent_memory'");
      for (const statement of distributionStatements().filter((statement) => !newTable(statement)))
        await admin.unsafe(statement);
      await migrate(drizzle({ client: admin }));
      // The line the upgrade adds to the block, run once.
      for (const statement of distributionStatements().filter(newTable)) await admin.unsafe(statement);

      const distributed = await admin.unsafe<{ table: string }[]>(
        `select logicalrelid::regclass::text as table from pg_dist_partition order by 1`,
      );
      expect(distributed.map((row) => row.table)).toEqual([...TABLES].sort());
      // The store refuses a database whose migrations have not all run (its setup check): it is used after them.
      const store = createAgentHistory({ db: drizzle({ client: app }) as unknown as AgentHistoryDatabase }).forTenant(
        randomUUID(),
        { userId: 'alice' },
      );
      const thread = await store.createThread({ title: 'Units' });
      await store.appendMessage(thread.id, {
        id: 'u1',
        role: 'user',
        parts: [{ type: 'text', text: 'I prefer metric units' }],
      });
      const second = await store.createThread({ title: 'Trip' });
      await store.updateWorkingMemory({ content: 'metric', expectedVersion: 0 });
      expect(
        await store.embedPendingMemory({ embedder: { modelId: 'm', embed: async (texts) => texts.map(() => [1, 1]) } }),
      ).toMatchObject({ embedded: 1 });
      const hits = await store.recallMessages({ query: 'units', threadId: second.id });
      expect(hits.map((hit) => hit.text)).toEqual(['I prefer metric units']);

      // The content columns' lz4 reached every shard of the distributed tables, and a long message is stored so.
      const shardMethods = await admin.unsafe<{ result: string }[]>(
        `select result from run_command_on_shards('agent_message',
           $$select attcompression from pg_attribute where attrelid = '%s'::regclass and attname = 'parts'$$)`,
      );
      expect(shardMethods.length).toBeGreaterThan(1);
      expect(new Set(shardMethods.map((row) => row.result))).toEqual(new Set(['l']));
      const long = 'metric units, always '.repeat(2_000);
      await store.appendMessage(thread.id, { id: 'long', role: 'user', parts: [{ type: 'text', text: long }] });
      expect(
        await admin.unsafe(
          `select pg_column_compression(parts) as method from agent_message where message_id = 'long'`,
        ),
      ).toEqual([{ method: 'lz4' }]);
      expect((await store.getMessage(thread.id, 'long')).message.parts).toEqual([{ type: 'text', text: long }]);
    } finally {
      await app.end();
      await admin.end();
      await dropCitusDatabase(cluster, name);
    }
  });
});
