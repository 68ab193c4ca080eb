import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import postgres from 'postgres';

/** The repository's root. */
export const ROOT = resolve(import.meta.dirname, '../../..');

const FIXTURE = join(ROOT, 'examples/drizzle-kit-consumer');

/**
 * Copies `examples/drizzle-kit-consumer` into `folder` and installs what `npm install` would: the package at
 * `packageRoot` (its exports map and built files), drizzle-orm, drizzle-kit and postgres, with their bins.
 */
export function createConsumerProject(folder: string, packageRoot: string): void {
  for (const file of ['schema.ts', 'drizzle.config.ts', 'package.json', 'tsconfig.json'])
    cpSync(join(FIXTURE, file), join(folder, file));
  mkdirSync(join(folder, 'node_modules/.bin'), { recursive: true });
  linkPackage(folder, packageRoot);
  for (const dependency of ['drizzle-orm', 'drizzle-kit', 'postgres', 'typescript', '@types']) {
    symlinkSync(join(ROOT, 'node_modules', dependency), join(folder, 'node_modules', dependency), 'dir');
  }
  symlinkSync(join(ROOT, 'node_modules/drizzle-kit/bin.cjs'), join(folder, 'node_modules/.bin/drizzle-kit'));
}

/** Points the project's `node_modules/agent-history` at `packageRoot` (an upgrade is `npm install` of another). */
export function linkPackage(folder: string, packageRoot: string): void {
  rmSync(join(folder, 'node_modules/agent-history'), { force: true });
  symlinkSync(packageRoot, join(folder, 'node_modules/agent-history'), 'dir');
}

/** The bash block of README.md that follows the `<!-- marker: … -->` comment. */
export function readmeBlock(marker: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`<!-- ${marker}:`);
  if (at < 0) throw new Error(`README.md has no <!-- ${marker}: --> marker`);
  const block = /```bash\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!block) throw new Error(`README.md has no bash block after <!-- ${marker}: -->`);
  return block[1]!;
}

/**
 * Runs `script` with bash in `folder` against `databaseUrl`, `npx` being the repository's Node 22 one. drizzle-kit
 * migrate exits 1 printing nothing when a statement fails, so on failure each migration file is replayed with psql
 * on a scratch copy of the database and the first error is part of the thrown message.
 */
export function runScript(folder: string, script: string, databaseUrl: string): string {
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: folder,
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: databaseUrl, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
  });
  if (result.status === 0) return result.stdout;
  throw new Error(
    `bash exited ${result.status}\n--- script\n${script}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}` +
      `\n--- the migrations replayed with psql\n${replayWithPsql(folder, databaseUrl)}`,
  );
}

function replayWithPsql(folder: string, databaseUrl: string): string {
  let journal: { entries: { tag: string }[] };
  try {
    journal = JSON.parse(readFileSync(join(folder, 'drizzle/meta/_journal.json'), 'utf8'));
  } catch (error) {
    return `no journal: ${String(error)}`;
  }
  const lines: string[] = [];
  for (const { tag } of journal.entries) {
    const sql = readFileSync(join(folder, 'drizzle', `${tag}.sql`), 'utf8').replaceAll('--> statement-breakpoint', '');
    const run = spawnSync('psql', [databaseUrl, '-v', 'ON_ERROR_STOP=1', '-q', '-1', '-c', sql], { encoding: 'utf8' });
    lines.push(`${tag}: ${run.status === 0 ? 'ok' : run.stderr.trim()}`);
    if (run.status !== 0) break;
  }
  return lines.join('\n');
}

/** Creates an empty database; returns its superuser URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = postgres(`${serverUrl}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return `${serverUrl}/${name}`;
}

/**
 * What a database holds of the package, as sorted lines: tables and their row-level security, columns (by name,
 * not position: a column added by an upgrade comes last), enum labels, constraints, indexes, policies, the
 * functions' definitions and settings, and the grants. drizzle-kit's and migrate()'s own migrations tables are left out.
 */
export function describeCatalog(databaseUrl: string): string[] {
  const query = `
    select 'table ' || c.relname || ' rls=' || c.relrowsecurity || ' force=' || c.relforcerowsecurity || ' acl=' || coalesce(array_to_string(array(select unnest(c.relacl)::text order by 1), ','), '')
      from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
    union all
    select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' generated=' || a.attgenerated::text
      from pg_attribute a join pg_class c on c.oid = a.attrelid left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where c.relnamespace = 'public'::regnamespace and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
    union all
    select 'enum ' || t.typname || ' ' || array_to_string(array(select enumlabel from pg_enum e where e.enumtypid = t.oid order by enumsortorder), ',')
      from pg_type t where t.typnamespace = 'public'::regnamespace and t.typtype = 'e'
    union all
    select 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      from pg_constraint where connamespace = 'public'::regnamespace
    union all
    select 'index ' || indexdef from pg_indexes where schemaname = 'public'
    union all
    select 'policy ' || tablename || ' ' || policyname || ' ' || permissive || ' ' || array_to_string(roles, ',') || ' ' || cmd || ' using=' || coalesce(qual, '') || ' check=' || coalesce(with_check, '')
      from pg_policies where schemaname = 'public'
    union all
    select 'function ' || p.oid::regprocedure || ' ' || pg_get_functiondef(p.oid) || ' acl=' || coalesce(array_to_string(array(select unnest(p.proacl)::text order by 1), ','), '')
      from pg_proc p where p.pronamespace = 'public'::regnamespace
    order by 1`;
  return execFileSync('psql', [databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', query], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\n')
    .filter((line) => line !== '');
}

/** The `.sql` files of a drizzle folder, in journal order. */
export function migrationTags(drizzleFolder: string): string[] {
  const journal = JSON.parse(readFileSync(join(drizzleFolder, 'meta/_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  const files = new Set(readdirSync(drizzleFolder));
  return journal.entries.map(({ tag }) => tag).filter((tag) => files.has(`${tag}.sql`));
}
