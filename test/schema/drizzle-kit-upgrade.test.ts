import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AFTER_TABLES, BEFORE_TABLES } from '../../src/store/custom-migration-sql.js';
import { migrate } from '../../src/store/migrate.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import {
  createConsumerProject,
  createDatabase,
  describeCatalog,
  linkPackage,
  readmeBlock,
  ROOT,
  runScript,
} from './support/consumer-project.js';
import { SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';
import { expectStoreWorksAsLogin } from './support/use-store-as-login.js';

/** 0.1.0: the package as of the first commit with migration 0004 (0000-0004), built from git. */
function buildOldPackage(folder: string): { root: string; files: Set<string> } {
  const commits = execFileSync('git', ['-C', ROOT, 'log', '--diff-filter=A', '--format=%H', '--', 'drizzle/0004_*'], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n');
  const commit = commits.at(-1)!;
  execFileSync('bash', [
    '-c',
    `git -C "${ROOT}" archive ${commit} src drizzle package.json tsconfig.json tsconfig.build.json | tar -x -C "${folder}"`,
  ]);
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'), 'dir');
  execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: folder, stdio: 'pipe' });
  const files = new Set(
    [...BEFORE_TABLES, ...AFTER_TABLES].filter((file) => existsSync(join(folder, 'drizzle', file))),
  );
  return { root: folder, files };
}

/** The install block's `add` function, and only those of its `add` lines whose file the old package has. */
function installScriptOf(files: Set<string>): string {
  return readmeBlock('drizzle-kit-install')
    .split('\n')
    .filter((line) => !/^add (\S+)/.test(line) || files.has(`${/^add (\S+)/.exec(line)![1]}.sql`))
    .join('\n');
}

describe('upgrading from 0.1.0 (migrations 0000-0004) on PostgreSQL 15', { timeout: SUBPROCESS_TIMEOUT_MS }, () => {
  let cluster: PostgresCluster;
  let server: string;
  let old: { root: string; files: Set<string> };
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-upgrade-'));
  const oldFolder = mkdtempSync(join(tmpdir(), 'agent-history-0.1-'));
  let expected: string[];
  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { fsync: 'off' } });
    server = cluster.url('').replace(/\/$/, '');
    old = buildOldPackage(oldFolder);
    const fresh = await createDatabase(server, 'fresh');
    const client = postgres(fresh, { max: 1, onnotice: () => {} });
    await migrate(drizzle({ client }));
    await client.end();
    expected = describeCatalog(fresh);
  });
  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
    rmSync(oldFolder, { recursive: true, force: true });
    cluster?.stop();
  });

  it("should add, in the README's upgrade block, exactly the custom files newer than 0.1.0", () => {
    expect(old.files).toEqual(new Set(['0000_roles.sql', '0002_force_rls_grants_append.sql', '0004_append_batch.sql']));
    const added = [...readmeBlock('drizzle-kit-upgrade').matchAll(/^add (\S+)/gm)].map(([, file]) => `${file}.sql`);
    expect(added).toEqual([...BEFORE_TABLES, ...AFTER_TABLES].filter((file) => !old.files.has(file)));
  });

  it("should bring a drizzle-kit project migrated with 0.1.0 to what migrate() gives, by the README's upgrade block", async () => {
    const url = await createDatabase(server, 'kit_upgraded');
    createConsumerProject(folder, old.root);
    runScript(folder, installScriptOf(old.files), url);
    expect(describeCatalog(url).filter((line) => !/\bproject\b/.test(line))).not.toEqual(expected);
    linkPackage(folder, ROOT);
    // As written: an upgrade runs in a shell of its own, days after the install, so the block defines `add` itself.
    runScript(folder, readmeBlock('drizzle-kit-upgrade'), url);
    expect(describeCatalog(url).filter((line) => !/\bproject\b/.test(line))).toEqual(expected);
    await expectStoreWorksAsLogin(url);
  });

  it("should bring a database migrated by 0.1.0's migrate() to the same place with this migrate()", async () => {
    const url = await createDatabase(server, 'package_upgraded');
    const client = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const { migrate: oldMigrate } = (await import(join(old.root, 'dist/store/migrate.js'))) as {
        migrate: typeof migrate;
      };
      await oldMigrate(drizzle({ client }));
      await migrate(drizzle({ client }));
    } finally {
      await client.end();
    }
    expect(describeCatalog(url)).toEqual(expected);
    await expectStoreWorksAsLogin(url);
  });
});
