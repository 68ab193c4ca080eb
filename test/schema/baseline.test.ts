import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSetup, createAgentHistory, DatabaseError, migrate, MIGRATIONS_FOLDER } from '../../src/index.js';
import { migratorFor } from '../../src/store/migrate.js';
import { BASELINE_MIGRATIONS } from './support/release-one.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { psql, startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { expectStoreWorksAsLogin } from './support/use-store-as-login.js';

/** How many migrations the package ships: the 1.0 baseline's three and every one added since. */
const SHIPPED = (
  JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: unknown[] }
).entries.length;

/** `migrate()` as `login` on `database`, through a connection of its own. */
async function migrateAs(cluster: PostgresCluster, login: string, database: string): Promise<void> {
  const client = postgres(cluster.url(database).replace('postgres://postgres@', `postgres://${login}@`), {
    max: 1,
    onnotice: () => {},
  });
  try {
    await migrate(drizzle({ client }));
  } finally {
    await client.end();
  }
}

/** Each `CREATE FUNCTION` of the shipped migrations, in the order they run: name and body (between the `$$`s). */
function shippedFunctions(folder = MIGRATIONS_FOLDER): Array<{ file: string; name: string; body: string }> {
  const found = [];
  for (const file of readdirSync(folder)
    .filter((name) => name.endsWith('.sql'))
    .sort()) {
    const text = readFileSync(join(folder, file), 'utf8');
    for (const match of text.matchAll(
      /CREATE (?:OR REPLACE )?FUNCTION "public"\."(\w+)"\([^$]*?AS \$\$([\s\S]*?)\$\$;/g,
    ))
      found.push({ file, name: match[1]!, body: match[2]! });
  }
  return found;
}

// A cluster of its own: the suite's shared server already has agent_history_app, which hides the first migration's
// work and its refusal.
describe('the 1.0 baseline on a fresh PostgreSQL 15 cluster', () => {
  let cluster: PostgresCluster;
  const admin = (database: string, command: string) => psql(cluster.url(database), command);
  beforeAll(async () => {
    cluster = await startPostgresCluster();
    for (const statement of [
      'create role plain_owner login nosuperuser nobypassrls nocreaterole',
      'create database plain owner plain_owner',
      'create role role_maker login nosuperuser nobypassrls createrole',
      'create database made owner role_maker',
    ])
      admin('postgres', statement);
  }, 120_000);
  afterAll(() => cluster?.stop());

  it('should refuse an owner without CREATEROLE on a cluster without the application role, naming the statement to run, and change nothing', async () => {
    const error = await migrateAs(cluster, 'plain_owner', 'plain').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as DatabaseError).message).toBe(
      'The database failed (42501): agent-history: the role "agent_history_app" does not exist, and plain_owner may ' +
        'not create it (hint: As a role with CREATEROLE, run once: CREATE ROLE "agent_history_app" NOLOGIN; then run ' +
        'the migrations again.)',
    );
    expect(admin('plain', "select coalesce(to_regclass('agent_thread')::text, 'none')")).toBe('none\n');
    // Drizzle's migrator makes its (empty) table before the migrations' transaction; nothing else is left.
    expect(admin('plain', 'select count(*) from agent_history.__agent_history_migrations')).toBe('0\n');
  });

  it('should migrate as an owner with CREATEROLE, neither superuser nor BYPASSRLS, creating the role, and run the store as a NOINHERIT login', async () => {
    await migrateAs(cluster, 'role_maker', 'made');
    expect(admin('postgres', "select rolcanlogin from pg_roles where rolname = 'agent_history_app'")).toBe('f\n');
    await migrateAs(cluster, 'role_maker', 'made'); // a second run does nothing
    expect(admin('made', 'select count(*) from agent_history.__agent_history_migrations')).toBe(`${SHIPPED}\n`);
    expect(admin('made', "select tableowner from pg_tables where tablename = 'agent_message'")).toBe('role_maker\n');
    await expectStoreWorksAsLogin(cluster.url('made'));
  });

  it('should migrate as an owner without CREATEROLE once the role exists, and run the store as a NOINHERIT login', async () => {
    await migrateAs(cluster, 'plain_owner', 'plain');
    expect(admin('plain', 'select count(*) from agent_history.__agent_history_migrations')).toBe(`${SHIPPED}\n`);
    await expectStoreWorksAsLogin(cluster.url('plain'));
  });

  it('should leave each function exactly as its one definition in the migrations, and no other', async () => {
    const shipped = shippedFunctions();
    // The latest definition of each wins: a later migration that changes a function re-creates it.
    const latest = new Map(shipped.map((definition) => [definition.name, definition.body]));
    // One definition each in the baseline's migrations, and one in each later migration at most.
    const files = [...new Set(shipped.map((definition) => definition.file))];
    const baseline = shipped.filter((definition) => Number(definition.file.slice(0, 4)) < BASELINE_MIGRATIONS);
    expect(baseline.length).toBeGreaterThan(0);
    expect(new Set(baseline.map((definition) => definition.name)).size).toBe(baseline.length);
    for (const file of files)
      expect(
        new Set(shipped.filter((definition) => definition.file === file).map((definition) => definition.name)).size,
        file,
      ).toBe(shipped.filter((definition) => definition.file === file).length);
    const installed = admin(
      'made',
      `select json_agg(json_build_object('name', p.proname, 'body', p.prosrc) order by p.proname)
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public'`,
    );
    const functions = JSON.parse(installed) as Array<{ name: string; body: string }>;
    expect(functions.map((fn) => fn.name)).toEqual([...latest.keys()].sort());
    for (const fn of functions) expect(fn.body, fn.name).toBe(latest.get(fn.name));
    const triggers = admin(
      'made',
      `select string_agg(pg_get_triggerdef(t.oid), E'\\n' order by t.tgname) from pg_trigger t
       where t.tgrelid = 'agent_message'::regclass and not t.tgisinternal`,
    );
    const shippedTriggers = readdirSync(MIGRATIONS_FOLDER)
      .filter((file) => file.endsWith('.sql'))
      .flatMap((file) => [...readFileSync(join(MIGRATIONS_FOLDER, file), 'utf8').matchAll(/CREATE TRIGGER [^;]+;/g)])
      .map(([statement]) =>
        statement
          .replace(/\s+/g, ' ')
          .replace(/"public"\.|"/g, '')
          .replace(/;$/, ''),
      );
    expect(
      triggers
        .trim()
        .split('\n')
        .map((line) => line.replace(/public\./g, '')),
    ).toEqual(shippedTriggers.sort());
  });

  it('should upgrade a baseline database with a later migration while appends run, losing and reordering nothing', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-history-upgrade-'));
    try {
      // A later release: the shipped folder plus one migration that takes locks the appends need (an index on the
      // messages, and a new version of the single append: same signature and body, one comment more).
      cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
      const append = shippedFunctions().find((definition) => definition.name === 'agent_history_append_message')!;
      const source = readFileSync(join(MIGRATIONS_FOLDER, append.file), 'utf8');
      const start = source.indexOf('CREATE FUNCTION "public"."agent_history_append_message"(');
      const definition = source.slice(start, source.indexOf('$$;', source.indexOf('AS $$', start) + 5) + 3);
      writeFileSync(
        join(folder, '0099_upgrade_test.sql'),
        [
          'CREATE INDEX "agent_message_upgrade_test_idx" ON "agent_message" USING btree ("tenant_id","created_at");',
          definition
            .replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION')
            .replace('BEGIN\n', 'BEGIN\n  -- upgraded\n'),
        ].join('--> statement-breakpoint\n'),
      );
      const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8'));
      const last = journal.entries.at(-1);
      journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1, tag: '0099_upgrade_test' });
      writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal, null, 2));

      const login = `upgrade_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      admin('made', `create role ${login} login noinherit; grant agent_history_app to ${login};`);
      const app = postgres(cluster.url('made').replace('postgres://postgres@', `postgres://${login}@`), {
        max: 8,
        onnotice: () => {},
      });
      const owner = postgres(cluster.url('made').replace('postgres://postgres@', 'postgres://role_maker@'), {
        max: 1,
        onnotice: () => {},
      });
      try {
        const history = createAgentHistory({ db: drizzle({ client: app }) as unknown as AgentHistoryDatabase });
        const store = history.forTenant(randomUUID());
        const threads = await Promise.all([0, 1, 2].map(() => store.createThread()));
        let migrated = false;
        const progress = [0, 0, 0];
        const writers = threads.map(async (thread, index) => {
          const written: string[] = [];
          // Appends before, during and after the upgrade: each thread keeps going until the upgrade is done.
          for (let n = 0; !migrated || n < 20; n++) {
            const id = `t${index}-m${n}`;
            await store.appendMessage(thread.id, { id, role: 'user', parts: [{ type: 'text', text: id }] });
            written.push(id);
            progress[index]!++;
          }
          return written;
        });
        const ownerDb = drizzle({ client: owner }) as unknown as AgentHistoryDatabase;
        // The upgrade starts once every thread has appended (each thread's next appends wait on its locks).
        while (progress.some((count) => count < 3)) await new Promise((resolve) => setTimeout(resolve, 5));
        await (
          await migratorFor(ownerDb)
        ).migrate(ownerDb as never, {
          migrationsFolder: folder,
          migrationsTable: '__agent_history_migrations',
          migrationsSchema: 'agent_history',
        });
        migrated = true;
        const written = await Promise.all(writers);
        for (const [index, thread] of threads.entries()) {
          const { messages } = await store.listMessages(thread.id, { limit: 500 });
          const ordered = messages.toReversed();
          expect(ordered.map((stored) => stored.message.id)).toEqual(written[index]);
          expect(ordered.map((stored) => stored.sequence)).toEqual(ordered.map((_, position) => position + 1));
        }
        expect(admin('made', 'select count(*) from agent_history.__agent_history_migrations')).toBe(`${SHIPPED + 1}\n`);
        expect(
          admin(
            'made',
            "select prosrc like '%-- upgraded%' from pg_proc where proname = 'agent_history_append_message'",
          ),
        ).toBe('t\n');
        expect((await checkSetup(drizzle({ client: app }) as unknown as AgentHistoryDatabase)).ok).toBe(true);
      } finally {
        await app.end();
        await owner.end();
        admin('made', `drop owned by ${login}; drop role ${login};`);
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
}, 180_000);
