import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createAgentHistory,
  DatabaseError,
  migrate,
  MIGRATIONS_FOLDER,
  type AgentHistoryDatabase,
} from '../../src/index.js';
import { customMigrationFiles } from '../../src/store/custom-migration-sql.js';
import { rowsOf } from '../../src/tenant/database.js';
import { APP_LOGIN } from '../support/global-setup.js';
import { SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';
import { mockEmbedding } from '../store/memory-support.js';
import { asChatWindowPage } from '../support/fixtures.js';
import { BASELINE_MIGRATIONS, buildReleaseOne } from './support/release-one.js';
import {
  createConsumerProject,
  createDatabase,
  describeCatalog,
  installPackage,
  migrationTags,
  packPackage,
  runScript,
} from './support/consumer-project.js';

/** What the 1.0 release exports that this test uses. */
interface ReleaseOne {
  migrate: typeof migrate;
  createAgentHistory: typeof createAgentHistory;
}

/** How many migrations the package ships now: the baseline's and every one added since. */
const SHIPPED = (
  JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: unknown[] }
).entries.length;

const scratch = mkdtempSync(join(tmpdir(), 'agent-history-upgrade-'));
let releaseTarball: string;
let releaseOne: ReleaseOne;
beforeAll(async () => {
  releaseTarball = buildReleaseOne(scratch);
  releaseOne = (await import(pathToFileURL(join(scratch, 'source/dist/index.js')).href)) as ReleaseOne;
}, SUBPROCESS_TIMEOUT_MS);
const databases: string[] = [];
/** A fresh database on the suite's server, dropped after the file; returns its superuser URL. */
const freshDatabase = (prefix: string) => {
  const name = `${prefix}_${randomUUID().replaceAll('-', '')}`;
  databases.push(name);
  return createDatabase(inject('postgresServerUrl'), name);
};
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  const admin = postgres(`${inject('postgresServerUrl')}/postgres`, { max: 1, onnotice: () => {} });
  for (const name of databases) await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

/** Each table's rows of the tenant, read directly (as superuser), in a stable order. */
async function dump(query: (text: string) => Promise<unknown[]>, tenantId: string) {
  const rows: Record<string, unknown[]> = {};
  for (const table of ['agent_thread', 'agent_message', 'agent_audit_event'])
    rows[table] = await query(`select * from ${table} where tenant_id = '${tenantId}' order by id`);
  return rows;
}

/** Parts of one text part long enough for the server to compress. */
const large = (text: string) => [{ type: 'text' as const, text: text.repeat(2_000) }];

describe.each(['pglite', 'postgres'] as const)('upgrading a 1.0 database with migrate() on %s', (backend) => {
  let owner: AgentHistoryDatabase;
  let app: AgentHistoryDatabase;
  let query: (text: string) => Promise<unknown[]>;
  const closers: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    if (backend === 'pglite') {
      const client = await PGlite.create();
      owner = app = drizzlePglite({ client }) as unknown as AgentHistoryDatabase;
      query = async (text) => (await client.query(text)).rows;
      closers.push(() => client.close());
      return;
    }
    const url = await freshDatabase('upgrade');
    const ownerClient = postgres(url, { max: 1, onnotice: () => {} });
    const appClient = postgres(url.replace('postgres://postgres@', `postgres://${APP_LOGIN}@`), {
      max: 4,
      onnotice: () => {},
    });
    owner = drizzlePostgres({ client: ownerClient }) as unknown as AgentHistoryDatabase;
    app = drizzlePostgres({ client: appClient }) as unknown as AgentHistoryDatabase;
    query = (text) => ownerClient.unsafe(text);
    closers.push(
      () => appClient.end(),
      () => ownerClient.end(),
    );
  });
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('should keep every row the 1.0 store wrote, and memory should work after the upgrade', async () => {
    await releaseOne.migrate(owner);
    expect(await query(`select to_regclass('agent_memory') as memory`)).toEqual([{ memory: null }]);
    const tenantId = randomUUID();
    const old = releaseOne.createAgentHistory({ db: app }).forTenant(tenantId, { userId: 'alice' });
    const first = await old.createThread({ title: 'Units' });
    await old.appendMessage(first.id, {
      id: 'u1',
      role: 'user',
      parts: [{ type: 'text', text: 'I prefer metric units' }],
    });
    await old.appendMessage(first.id, {
      id: 'a1',
      role: 'assistant',
      parts: [{ type: 'text', text: 'Noted.' }],
    });
    await old.appendMessage(first.id, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'my pin is 9912' }] });
    const second = await old.createThread({ title: 'Trip' });
    await old.appendMessage(second.id, {
      id: 'q1',
      role: 'user',
      parts: [{ type: 'text', text: 'what units do I like?' }],
    });
    // Long enough to be compressed, with the server's default method (1.0 set none); in a tenant of its own.
    const longTenantId = randomUUID();
    const longTenant = releaseOne.createAgentHistory({ db: app }).forTenant(longTenantId);
    const longThread = (await longTenant.createThread()).id;
    await longTenant.appendMessage(longThread, { id: 'large-before', role: 'user', parts: large('before ') });
    const before = await dump(query, tenantId);

    await migrate(owner);
    // The package's migrations table: one row per migration applied.
    const applied = rowsOf<{ n: number }>(
      await owner.execute(sql`select count(*)::int as n from agent_history.__agent_history_migrations`),
    );
    expect(applied[0]!.n).toBe(SHIPPED);
    expect(SHIPPED).toBeGreaterThan(BASELINE_MIGRATIONS);
    expect(await dump(query, tenantId)).toEqual(before);
    expect(
      await query(`select relrowsecurity, relforcerowsecurity from pg_class where relname = 'agent_memory'`),
    ).toEqual([{ relrowsecurity: true, relforcerowsecurity: true }]);

    const store = createAgentHistory({ db: app }).forTenant(tenantId, { userId: 'alice' });
    const { embedder } = mockEmbedding();
    expect(await store.embedPendingMemory({ embedder })).toMatchObject({ embedded: 4 });
    const hits = await store.recallMessages({ query: 'what units do I like?', threadId: second.id, embedder });
    expect(hits[0]).toMatchObject({ text: 'I prefer metric units', via: 'both', sourceThreadId: first.id });
    await store.updateWorkingMemory({ content: 'metric', expectedVersion: 0 });
    expect(await store.getWorkingMemory()).toMatchObject({ content: 'metric', version: 1 });
    await store.redactMessage(first.id, 'u2', { actor: 'test', reason: 'pin' });
    expect(await query(`select id from agent_memory where content like '%9912%'`)).toEqual([]);

    // A turn's writes on the upgraded database, one statement each (the functions came with the upgrade).
    expect(
      await query(`select proname from pg_proc where proname in ('agent_history_get_thread', 'agent_history_start_run',
        'agent_history_finish_run', 'agent_history_write_answer', 'agent_history_write_snapshot') order by 1`),
    ).toHaveLength(5);
    const run = await store.startRun(second.id);
    await store.beginAssistantMessage(second.id, { messageId: 'a2', runId: run.id });
    await store.checkpointMessage(second.id, 'a2', { parts: [{ type: 'text', text: 'Metric' }] });
    await store.finalizeMessage(second.id, 'a2', {
      status: 'completed',
      parts: [{ type: 'text', text: 'Metric, as you like.' }],
      finishRun: { runId: run.id, usage: { inputTokens: 9 } },
    });
    expect(await store.getRun(run.id)).toMatchObject({ status: 'completed', inputTokens: 9 });
    expect((await old.getMessage(second.id, 'a2')).message.parts).toEqual([
      { type: 'text', text: 'Metric, as you like.' },
    ]);

    // A chat window's page, by the function the upgrade added, over rows the 1.0 store wrote and one written since.
    const page = await store.listChatMessages(second.id);
    expect(page.messages.map((entry) => [entry.sequence, entry.message.id, entry.status])).toEqual([
      [1, 'q1', 'completed'],
      [2, 'a2', 'completed'],
    ]);
    const firstThread = await store.listChatMessages(first.id, { limit: 2 });
    expect(firstThread).toStrictEqual(asChatWindowPage(await store.listMessages(first.id, { limit: 2 })));
    expect(firstThread.nextCursor).toBe(2);
    expect(await query(`select proname from pg_proc where proname = 'agent_history_list_chat_messages'`)).toHaveLength(
      1,
    );
    // The stored-message page reads were re-created with their bound as a variable (an index condition in a generic
    // plan); their grants and signatures stay.
    const pageReads = (await query(
      `select proname, prosrc like '%m.sequence < v_before%' as bound from pg_proc
       where proname like 'agent_history_list_messages%' order by proname`,
    )) as Array<{ proname: string; bound: boolean }>;
    expect(pageReads).toEqual([
      { proname: 'agent_history_list_messages', bound: true },
      { proname: 'agent_history_list_messages_json', bound: true },
    ]);
    expect((await old.listMessages(first.id, { before: 3, limit: 1 })).messages[0]!.message.id).toBe('a1');

    // Content compressed with lz4 from the upgrade on, where the server has it (PostgreSQL 15 here; not PGlite): a
    // value written before keeps pglz, and both read back unchanged.
    await createAgentHistory({ db: app })
      .forTenant(longTenantId)
      .appendMessage(longThread, { id: 'large-after', role: 'user', parts: large('after ') });
    expect(
      await query(`select attrelid::regclass::text as "table", attname as "column", attcompression as method
        from pg_attribute where (attrelid, attname) in (('agent_message'::regclass, 'parts'),
          ('agent_stream_chunk'::regclass, 'chunks'), ('agent_summary'::regclass, 'content'),
          ('agent_tool_payload'::regclass, 'content')) order by 1`),
    ).toEqual(
      [
        ['agent_message', 'parts'],
        ['agent_stream_chunk', 'chunks'],
        ['agent_summary', 'content'],
        ['agent_tool_payload', 'content'],
      ].map(([table, column]) => ({ table, column, method: backend === 'postgres' ? 'l' : '' })),
    );
    expect(
      await query(`select message_id, pg_column_compression(parts) as method from agent_message
        where message_id like 'large-%' order by message_id`),
    ).toEqual([
      { message_id: 'large-after', method: backend === 'postgres' ? 'lz4' : 'pglz' },
      { message_id: 'large-before', method: 'pglz' },
    ]);
    for (const [id, text] of [
      ['large-before', 'before '],
      ['large-after', 'after '],
    ] as const)
      expect((await longTenant.getMessage(longThread, id)).message.parts).toEqual(large(text));
  });
});

describe('an upgrade on PostgreSQL that cannot take its locks', () => {
  it('should fail within seconds with nothing applied, then apply once the locks are free', async () => {
    const url = await freshDatabase('locked');
    const owner = postgres(url, { max: 1, onnotice: () => {} });
    const holder = postgres(url, { max: 1, onnotice: () => {} });
    const db = drizzlePostgres({ client: owner }) as unknown as AgentHistoryDatabase;
    const applied = async () =>
      (await owner<Array<{ n: number }>>`select count(*)::int as n from agent_history.__agent_history_migrations`)[0]!
        .n;
    try {
      await releaseOne.migrate(db);
      expect(await applied()).toBe(BASELINE_MIGRATIONS);
      // A long transaction that read summaries (as a context load does) holds a lock the compression's ALTER waits for.
      let release!: () => void;
      let reading!: () => void;
      const read = new Promise<void>((resolve) => (reading = resolve));
      const held = holder.begin(async (tx) => {
        await tx`select count(*) from agent_summary`;
        reading();
        await new Promise<void>((resolve) => (release = resolve));
      });
      await read;
      const started = performance.now();
      const error = await migrate(db).catch((caught: unknown) => caught);
      expect(performance.now() - started).toBeLessThan(30_000);
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error).toMatchObject({ databaseCode: '55P03', retryable: true });
      expect(await applied()).toBe(BASELINE_MIGRATIONS);
      expect(await owner`select to_regclass('agent_memory') as memory`).toEqual([{ memory: null }]);
      release();
      await held;
      await migrate(db);
      expect(await applied()).toBe(SHIPPED);
      // The session's own lock timeout is what it was.
      expect(await owner`select current_setting('lock_timeout') as timeout`).toEqual([{ timeout: '0' }]);
    } finally {
      await holder.end();
      await owner.end();
    }
  }, 60_000);
});

describe(
  'upgrading a drizzle-kit project generated at 1.0 with agent-history generate',
  { timeout: SUBPROCESS_TIMEOUT_MS },
  () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-history-upgrade-consumer-'));
    const drizzleFolder = join(folder, 'drizzle');
    afterAll(() => rmSync(folder, { recursive: true, force: true }));

    it('should add exactly the new table migration and the new custom migrations, and apply them', async () => {
      createConsumerProject(folder, releaseTarball);
      runScript(folder, 'npx agent-history generate', 'postgres://unused');
      const atOne = migrationTags(drizzleFolder);
      expect(atOne).toEqual([
        '0000_agent_history_roles',
        expect.stringMatching(/^0001_/),
        '0002_agent_history_rls_grants_functions',
      ]);
      const url = await freshDatabase('kit');
      expect(runScript(folder, 'npx agent-history migrate', url)).toContain('applied 3 migrations');
      const oldFiles = Object.fromEntries(
        atOne.map((tag) => [tag, readFileSync(join(drizzleFolder, `${tag}.sql`), 'utf8')]),
      );

      installPackage(folder, packPackage(scratch));
      const output = runScript(folder, 'npx agent-history generate', 'postgres://unused');

      const tags = migrationTags(drizzleFolder);
      expect(tags).toEqual([
        ...atOne,
        expect.stringMatching(/^0003_/),
        '0004_agent_history_memory_rls_functions',
        '0005_agent_history_one_statement_writes',
        '0006_agent_history_page_reads',
        '0007_agent_history_content_compression',
      ]);
      for (const tag of atOne) expect(readFileSync(join(drizzleFolder, `${tag}.sql`), 'utf8')).toBe(oldFiles[tag]);
      const tables = readFileSync(join(drizzleFolder, `${tags[3]}.sql`), 'utf8');
      expect(tables.match(/CREATE TABLE "(\w+)"/g)).toEqual(['CREATE TABLE "agent_memory"']);
      expect(tables).not.toMatch(/DROP|ALTER TABLE "agent_(?!memory)/);
      const memory = customMigrationFiles().find((file) => file.name === 'memory_rls_functions')!;
      expect(readFileSync(join(drizzleFolder, `${tags[4]}.sql`), 'utf8')).toBe(`${memory.sql}\n`);
      const writes = customMigrationFiles().find((file) => file.name === 'one_statement_writes')!;
      expect(readFileSync(join(drizzleFolder, `${tags[5]}.sql`), 'utf8')).toBe(`${writes.sql}\n`);
      expect(output).toContain('added drizzle/0004_agent_history_memory_rls_functions.sql');
      const pageReads = customMigrationFiles().find((file) => file.name === 'page_reads')!;
      expect(readFileSync(join(drizzleFolder, `${tags[6]}.sql`), 'utf8')).toBe(`${pageReads.sql}\n`);
      expect(output).toContain(', drizzle/0006_agent_history_page_reads.sql');
      const compression = customMigrationFiles().find((file) => file.name === 'content_compression')!;
      expect(readFileSync(join(drizzleFolder, `${tags[7]}.sql`), 'utf8')).toBe(`${compression.sql}\n`);
      expect(output).toContain(', drizzle/0007_agent_history_content_compression.sql.');
      expect(runScript(folder, 'npx agent-history migrate', url)).toContain('applied 5 migrations');

      // The upgraded database is what migrate() makes of an empty one.
      const packageUrl = await freshDatabase('package');
      const client = postgres(packageUrl, { max: 1, onnotice: () => {} });
      await migrate(drizzlePostgres({ client })).finally(() => client.end());
      expect(describeCatalog(url).filter((line) => !/\bproject\b/.test(line))).toEqual(describeCatalog(packageUrl));
    });
  },
);
