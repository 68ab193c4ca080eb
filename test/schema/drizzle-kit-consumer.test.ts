import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MigrationPathConflictError } from '../../src/errors/index.js';
import { AFTER_TABLES, BEFORE_TABLES } from '../../src/store/custom-migration-sql.js';
import { migrate } from '../../src/store/migrate.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { TABLES } from '../support/tables.js';
import {
  createConsumerProject,
  createDatabase,
  describeCatalog,
  readmeBlock,
  ROOT,
  runScript,
} from './support/consumer-project.js';
import { SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';
import { expectStoreWorksAsLogin } from './support/use-store-as-login.js';

async function migrateWithPackage(url: string): Promise<void> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle({ client }));
  } finally {
    await client.end();
  }
}

describe('agent-history/schema in a drizzle-kit project', { timeout: SUBPROCESS_TIMEOUT_MS }, () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-consumer-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('should be loadable by drizzle-kit through `export * from "agent-history/schema"` and generate every table', () => {
    createConsumerProject(folder, ROOT);
    runScript(folder, 'npx drizzle-kit generate --name init', 'postgres://unused');
    const [migration] = readdirSync(join(folder, 'drizzle')).filter((file) => file.endsWith('.sql'));
    const sql = readFileSync(join(folder, 'drizzle', migration!), 'utf8');
    for (const table of [...TABLES, 'project']) {
      expect(sql).toContain(`CREATE TABLE "${table}"`);
    }
    for (const table of TABLES) {
      expect(sql).toContain(`ALTER TABLE "${table}" ENABLE ROW LEVEL SECURITY`);
      expect(sql).toContain(
        `CREATE POLICY "${table}_tenant_isolation" ON "${table}" AS PERMISSIVE FOR ALL TO "agent_history_app"`,
      );
    }
    // The example type-checks against the package's published types.
    execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: folder, stdio: 'pipe' });
    // The role is `.existing()`: drizzle-kit must not emit a non-idempotent CREATE ROLE.
    expect(sql).not.toContain('CREATE ROLE');
    expect(sql).toContain(`nullif(current_setting('app.tenant_id', true), '')::uuid`);
  });
});

// A cluster of its own: the suite's cluster already has agent_history_app, which hides a migration that needs it first.
describe("README's drizzle-kit path on a fresh PostgreSQL 15 cluster", { timeout: SUBPROCESS_TIMEOUT_MS }, () => {
  let cluster: PostgresCluster;
  let server: string;
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-consumer-'));
  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { fsync: 'off' } });
    server = cluster.url('').replace(/\/$/, '');
    createConsumerProject(folder, ROOT);
  });
  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
    cluster?.stop();
  });

  it("should list every custom file of the package in the README's install block, roles first", () => {
    const added = [...readmeBlock('drizzle-kit-install').matchAll(/^add (\S+)/gm)].map(([, file]) => `${file}.sql`);
    expect(added).toEqual([...BEFORE_TABLES, ...AFTER_TABLES]);
    expect(readmeBlock('drizzle-kit-install').indexOf('add 0000_roles')).toBeLessThan(
      readmeBlock('drizzle-kit-install').indexOf('npx drizzle-kit generate  '),
    );
  });

  it('should migrate a fresh database on the first try and give what migrate() gives, and the store should work', async () => {
    const kitUrl = await createDatabase(server, 'with_drizzle_kit');
    runScript(folder, readmeBlock('drizzle-kit-install'), kitUrl);
    const packageUrl = await createDatabase(server, 'with_migrate');
    await migrateWithPackage(packageUrl);
    const kitCatalog = describeCatalog(kitUrl).filter((line) => !/\bproject\b/.test(line));
    expect(kitCatalog).toEqual(describeCatalog(packageUrl));
    await expectStoreWorksAsLogin(kitUrl);
  });

  it('should refuse migrate() on the drizzle-kit database with MigrationPathConflictError, changing nothing', async () => {
    const kitUrl = `${server}/with_drizzle_kit`;
    const before = describeCatalog(kitUrl);
    const error = await migrateWithPackage(kitUrl).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MigrationPathConflictError);
    expect(error).toMatchObject({
      existing: 'agent_thread',
      migrationsTable: 'agent_history.__agent_history_migrations',
    });
    expect(describeCatalog(kitUrl)).toEqual(before);
    expect(
      execFileSync('psql', [kitUrl, '-qAtc', "select to_regclass('agent_history.__agent_history_migrations')"], {
        encoding: 'utf8',
      }).trim(),
    ).toBe('');
  });

  it('should fail, not succeed silently, when the drizzle-kit migrations run on a migrate() database', () => {
    const packageUrl = `${server}/with_migrate`;
    expect(() => runScript(folder, 'npx drizzle-kit migrate', packageUrl)).toThrow(/already exists/);
  });
});
