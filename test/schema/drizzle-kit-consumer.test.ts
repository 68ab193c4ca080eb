import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TABLES } from '../support/tables.js';

const root = resolve(import.meta.dirname, '../..');
const fixture = join(root, 'examples/drizzle-kit-consumer');

describe('agent-history/schema in a drizzle-kit project', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-consumer-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('should be loadable by drizzle-kit through `export * from "agent-history/schema"` and generate every table', () => {
    for (const file of ['schema.ts', 'drizzle.config.ts', 'package.json', 'tsconfig.json'])
      cpSync(join(fixture, file), join(folder, file));
    // What `npm install` in the consumer does: the package (its exports map and built files) and one drizzle-orm.
    mkdirSync(join(folder, 'node_modules'));
    symlinkSync(root, join(folder, 'node_modules/agent-history'), 'dir');
    for (const dependency of ['drizzle-orm', 'drizzle-kit', 'typescript', '@types']) {
      symlinkSync(join(root, 'node_modules', dependency), join(folder, 'node_modules', dependency), 'dir');
    }
    execFileSync(join(root, 'node_modules/.bin/drizzle-kit'), ['generate', '--name', 'init'], {
      cwd: folder,
      encoding: 'utf8',
      stdio: 'pipe',
    });
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
    execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], {
      cwd: folder,
      encoding: 'utf8',
      stdio: 'pipe',
    });
    // The role is `.existing()`: drizzle-kit must not emit a non-idempotent CREATE ROLE.
    expect(sql).not.toContain('CREATE ROLE');
    expect(sql).toContain(`nullif(current_setting('app.tenant_id', true), '')::uuid`);
  });
});
