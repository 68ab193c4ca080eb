import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MigrationPathConflictError } from '../../src/errors/index.js';
import { migrate } from '../../src/store/migrate.js';
import { psql, startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { TABLES } from '../support/tables.js';
import {
  createConsumerProject,
  createDatabase,
  describeCatalog,
  installPackage,
  migrationTags,
  packPackage,
  readmeBlock,
  ROOT,
  runBash,
  runScript,
  unpackPackage,
} from './support/consumer-project.js';
import { SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';
import { expectStoreWorksAsLogin } from './support/use-store-as-login.js';

const MARKER = 'drizzle-kit-setup';
const INSTALL = /^npm install agent-history drizzle-orm postgres && npm install --save-dev drizzle-kit$/m;

/**
 * The README block without its `npm install` line: the consumer project has what it installs (the packed package,
 * drizzle-orm, postgres, drizzle-kit), with no registry in a test.
 */
function setupScript(): string {
  const block = readmeBlock(MARKER);
  expect(block).toMatch(INSTALL);
  return block.replace(INSTALL, '');
}

/** Every file of a folder and its bytes. */
function folderBytes(folder: string): Record<string, string> {
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' }).sort();
  return Object.fromEntries(
    files.flatMap((file) => {
      try {
        return [[file, readFileSync(join(folder, file)).toString('base64')]];
      } catch {
        return []; // a folder
      }
    }),
  );
}

/** A superuser URL's database as `login`. */
const as = (url: string, login: string) => url.replace('postgres://postgres@', `postgres://${login}@`);

let tarball: string;
const scratch = mkdtempSync(join(tmpdir(), 'agent-history-cli-'));
beforeAll(() => {
  tarball = packPackage(scratch);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npx agent-history without a database', { timeout: SUBPROCESS_TIMEOUT_MS }, () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-consumer-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('should print its usage for --help (exit 0), and exit 2 for an unknown command and a bad --app-role', () => {
    createConsumerProject(folder, tarball);
    // The example type-checks against the packed package's types.
    execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: folder, stdio: 'pipe' });
    const help = runBash(folder, 'npx agent-history --help', 'postgres://unused');
    expect(help).toMatchObject({ status: 0, stdout: expect.stringContaining('Usage: agent-history <command>') });
    expect(runBash(folder, 'npx agent-history upgrade', 'postgres://unused')).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/unknown command "upgrade"[\s\S]*Usage:/),
    });
    expect(runBash(folder, "npx agent-history generate --app-role 'chat-app'", 'postgres://unused')).toMatchObject({
      status: 2,
      stderr: expect.stringContaining('Invalid appRole "chat-app"'),
    });
    expect(readdirSync(folder)).not.toContain('drizzle');
  });

  it('should refuse, naming the file, when a migration already creates the tables without the role before it', () => {
    runScript(folder, 'npx drizzle-kit generate --name init', 'postgres://unused');
    const sql = readFileSync(join(folder, 'drizzle/0000_init.sql'), 'utf8');
    for (const table of TABLES) expect(sql).toContain(`CREATE TABLE "${table}"`);
    const before = folderBytes(join(folder, 'drizzle'));
    const refused = runBash(folder, 'npx agent-history generate', 'postgres://unused');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('drizzle/0000_init.sql creates the agent-history tables');
    expect(refused.stderr).toContain('npx drizzle-kit drop');
    expect(refused.stderr).toContain('CREATE ROLE "agent_history_app" NOLOGIN;');
    expect(folderBytes(join(folder, 'drizzle'))).toEqual(before);
  });
  it('should write nothing and name --schema and --app-role when the schema defines the tables elsewhere', () => {
    const other = mkdtempSync(join(tmpdir(), 'agent-history-consumer-'));
    try {
      createConsumerProject(other, tarball);
      writeFileSync(
        join(other, 'schema.ts'),
        "import { pgSchema } from 'drizzle-orm/pg-core';\nimport { defineAgentTables } from 'agent-history/schema';\n" +
          "export const { agentThread, agentMessage } = defineAgentTables({ schema: pgSchema('agent'), appRole: 'chat_app' });\n",
      );
      expect(runBash(other, 'npx agent-history generate', 'postgres://unused')).toMatchObject({
        status: 1,
        stderr: expect.stringContaining('run this with --schema agent.'),
      });
      expect(runBash(other, 'npx agent-history generate --schema agent', 'postgres://unused')).toMatchObject({
        status: 1,
        stderr: expect.stringContaining('run this with --app-role chat_app.'),
      });
      expect(readdirSync(other)).not.toContain('drizzle');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

// Clusters of their own: the suite's cluster already has agent_history_app, which hides a migration that needs it.
describe(
  "the README's block on a fresh PostgreSQL 15 cluster, as an owner with CREATEROLE",
  {
    timeout: SUBPROCESS_TIMEOUT_MS,
  },
  () => {
    let cluster: PostgresCluster;
    let server: string;
    let url: string;
    const folder = mkdtempSync(join(tmpdir(), 'agent-history-consumer-'));
    const drizzleFolder = join(folder, 'drizzle');
    beforeAll(async () => {
      cluster = await startPostgresCluster({ settings: { fsync: 'off' } });
      server = cluster.url('').replace(/\/$/, '');
      psql(cluster.url(), 'create role app_owner login createrole');
      url = await createDatabase(server, 'app');
      psql(cluster.url(), 'alter database app owner to app_owner');
      createConsumerProject(folder, tarball);
    });
    afterAll(() => {
      rmSync(folder, { recursive: true, force: true });
      cluster?.stop();
    });

    it('should add the role, the tables and the rest, migrate, give what migrate() gives, and the store should work', async () => {
      const output = runScript(folder, setupScript(), as(url, 'app_owner'));
      expect(output).toContain('agent-history migrate: applied 7 migrations of drizzle.');
      const tags = migrationTags(drizzleFolder);
      expect(tags).toEqual([
        '0000_agent_history_roles',
        expect.stringMatching(/^0001_/),
        '0002_agent_history_rls_grants_functions',
        '0003_agent_history_memory_rls_functions',
        '0004_agent_history_one_statement_writes',
        '0005_agent_history_page_reads',
        '0006_agent_history_content_compression',
      ]);
      expect(readFileSync(join(drizzleFolder, `${tags[1]}.sql`), 'utf8')).toContain('CREATE TABLE "agent_thread"');
      expect(psql(url, "select rolname from pg_roles where rolname = 'agent_history_app'").trim()).toBe(
        'agent_history_app',
      );
      // The same owner, so that the grants (which name it) compare equal.
      const packageUrl = await createDatabase(server, 'with_migrate');
      psql(cluster.url(), 'alter database with_migrate owner to app_owner');
      const client = postgres(as(packageUrl, 'app_owner'), { max: 1, onnotice: () => {} });
      await migrate(drizzle({ client })).finally(() => client.end());
      const kitCatalog = describeCatalog(url).filter((line) => !/\bproject\b/.test(line));
      expect(kitCatalog).toEqual(describeCatalog(packageUrl));
      await expectStoreWorksAsLogin(url);
    });

    it('should add nothing, and drizzle-kit should write nothing, when generate runs again', () => {
      const before = folderBytes(drizzleFolder);
      const output = runScript(folder, 'npx agent-history generate', 'postgres://unused');
      expect(output).toContain('No schema changes, nothing to migrate');
      expect(output).toContain('agent-history: drizzle has every agent-history migration; nothing added.');
      expect(folderBytes(drizzleFolder)).toEqual(before);
      expect(runScript(folder, 'npx agent-history migrate', as(url, 'app_owner'))).toContain('nothing new to apply');
    });

    it('should print the missing grant for a login and exit 1, then exit 0 once it is granted', () => {
      psql(url, 'create role app_login login noinherit');
      const missing = runBash(folder, `npx agent-history check --url ${as(url, 'app_login')}`, 'postgres://unused');
      expect(missing.status).toBe(1);
      expect(missing.stdout).toContain('app-role-not-granted');
      expect(missing.stdout).toContain('fix: GRANT "agent_history_app" TO "app_login";');
      psql(url, 'grant agent_history_app to app_login');
      expect(runScript(folder, 'npx agent-history check', as(url, 'app_login')).trim()).toBe(
        'agent-history check: OK (login "app_login", role "agent_history_app")',
      );
    });

    it("should append a newer release's new custom migration after the app's own, and apply it", () => {
      // A later release: the same package with one more after-tables file, listed where the package lists them.
      const release = join(scratch, 'release');
      unpackPackage(tarball, release);
      writeFileSync(
        join(release, 'drizzle/0099_release_probe.sql'),
        "-- A later release's custom migration.\nCOMMENT ON TABLE agent_thread IS 'release probe';\n",
      );
      const compiled = join(release, 'dist/store/custom-migration-sql.js');
      const source = readFileSync(compiled, 'utf8');
      const listed = /export const AFTER_TABLES = \[([^\]]*)\];/;
      expect(source).toMatch(listed);
      writeFileSync(
        compiled,
        source.replace(
          listed,
          (_line, files: string) =>
            `export const AFTER_TABLES = [${files.trim().replace(/,$/, '')}, '0099_release_probe.sql'];`,
        ),
      );
      execFileSync('tar', ['-czf', join(scratch, 'release.tgz'), '-C', scratch, 'release']);
      // The app changed its own schema meanwhile, and upgrades the package.
      appendFileSync(
        join(folder, 'schema.ts'),
        "\nexport const note = pgTable('note', { id: uuid('id').primaryKey(), body: text('body') });\n",
      );
      installPackage(folder, join(scratch, 'release.tgz'));
      const before = folderBytes(drizzleFolder);
      const tagsBefore = migrationTags(drizzleFolder);

      const output = runScript(folder, setupScript(), as(url, 'app_owner'));

      const tags = migrationTags(drizzleFolder);
      const next = tagsBefore.length;
      const [schemaChange, probe] = [`${String(next).padStart(4, '0')}_`, `${String(next + 1).padStart(4, '0')}_`];
      expect(tags).toEqual([
        ...tagsBefore,
        expect.stringMatching(new RegExp(`^${schemaChange}`)),
        `${probe}agent_history_release_probe`,
      ]);
      expect(readFileSync(join(drizzleFolder, `${tags[next]}.sql`), 'utf8')).toContain('CREATE TABLE "note"');
      expect(readFileSync(join(drizzleFolder, `${probe}agent_history_release_probe.sql`), 'utf8')).toContain(
        `COMMENT ON TABLE "public"."agent_thread" IS 'release probe';`,
      );
      const after = folderBytes(drizzleFolder);
      for (const tag of tagsBefore) expect(after[`${tag}.sql`]).toBe(before[`${tag}.sql`]);
      expect(output).toContain('agent-history migrate: applied 2 migrations of drizzle.');
      expect(psql(url, "select obj_description('agent_thread'::regclass, 'pg_class')").trim()).toBe('release probe');
    });

    it('should make migrate() refuse the drizzle-kit database with MigrationPathConflictError', async () => {
      const client = postgres(url, { max: 1, onnotice: () => {} });
      const error = await migrate(drizzle({ client }))
        .catch((caught: unknown) => caught)
        .finally(() => client.end());
      expect(error).toBeInstanceOf(MigrationPathConflictError);
    });
  },
);

describe(
  "the README's block on a fresh PostgreSQL 15 cluster, as an owner without CREATEROLE",
  {
    timeout: SUBPROCESS_TIMEOUT_MS,
  },
  () => {
    let cluster: PostgresCluster;
    let url: string;
    const folder = mkdtempSync(join(tmpdir(), 'agent-history-consumer-'));
    beforeAll(async () => {
      cluster = await startPostgresCluster({ settings: { fsync: 'off' } });
      psql(cluster.url(), 'create role app_owner login');
      url = await createDatabase(cluster.url('').replace(/\/$/, ''), 'app');
      psql(cluster.url(), 'alter database app owner to app_owner');
      createConsumerProject(folder, tarball);
    });
    afterAll(() => {
      rmSync(folder, { recursive: true, force: true });
      cluster?.stop();
    });

    it("should fail with Postgres's error and the CREATE ROLE hint, then pass once an administrator ran it", () => {
      const failed = runBash(folder, setupScript(), as(url, 'app_owner'));
      expect(failed.status).toBe(1);
      expect(failed.stderr).toContain('agent-history migrate: the migrations of drizzle failed and were rolled back.');
      expect(failed.stderr).toContain('in: drizzle/0000_agent_history_roles.sql');
      expect(failed.stderr).toContain(
        'error: agent-history: the role "agent_history_app" does not exist, and app_owner may not create it',
      );
      expect(failed.stderr).toContain('code: 42501');
      expect(failed.stderr).toContain(
        'hint: As a role with CREATEROLE, run once: CREATE ROLE "agent_history_app" NOLOGIN; then run the migrations again.',
      );
      // One transaction: nothing of the failed run stays.
      expect(psql(url, "select to_regclass('agent_thread') is null").trim()).toBe('t');

      psql(cluster.url(), 'CREATE ROLE "agent_history_app" NOLOGIN;');
      expect(runScript(folder, 'npx agent-history migrate', as(url, 'app_owner'))).toContain(
        'agent-history migrate: applied 7 migrations of drizzle.',
      );
      expect(psql(url, "select relforcerowsecurity from pg_class where oid = 'agent_thread'::regclass").trim()).toBe(
        't',
      );
    });
  },
);
