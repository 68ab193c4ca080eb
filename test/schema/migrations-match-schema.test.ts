import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import { describe, expect, it } from 'vitest';
import * as schema from '../../src/schema/index.js';
import { customMigrationSql } from '../../src/store/custom-migration-sql.js';
import { TABLES } from '../support/tables.js';

const drizzleFolder = resolve(import.meta.dirname, '../../drizzle');

describe('drizzle/ migrations', () => {
  it('should match src/schema exactly (no pending change for drizzle-kit generate)', async () => {
    const snapshots = readdirSync(join(drizzleFolder, 'meta'))
      .filter((file) => file.endsWith('_snapshot.json'))
      .sort();
    const latest = JSON.parse(readFileSync(join(drizzleFolder, 'meta', snapshots.at(-1)!), 'utf8'));
    const current = generateDrizzleJson(schema as Record<string, unknown>, latest.id);
    expect(await generateMigration(latest, current)).toEqual([]);
  });

  it('should detect a schema change (the check above can fail)', async () => {
    const snapshots = readdirSync(join(drizzleFolder, 'meta'))
      .filter((file) => file.endsWith('_snapshot.json'))
      .sort();
    const latest = JSON.parse(readFileSync(join(drizzleFolder, 'meta', snapshots.at(-1)!), 'utf8'));
    const { agentThread: _dropped, ...withoutThread } = schema;
    const current = generateDrizzleJson(withoutThread as Record<string, unknown>, latest.id);
    const statements = await generateMigration(latest, current);
    expect(statements.join('\n')).toContain('DROP TABLE "agent_thread"');
  });

  it('should keep FORCE row-level security and grants for every table in the custom migrations', () => {
    const custom = customMigrationSql().afterTables.replaceAll('"public".', '');
    for (const table of TABLES) {
      expect(custom).toContain(`ALTER TABLE "${table}" FORCE ROW LEVEL SECURITY`);
      expect(custom).toContain(`"${table}"`);
    }
  });
});
