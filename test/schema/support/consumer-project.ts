import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import postgres from 'postgres';

/** The repository's root. */
export const ROOT = resolve(import.meta.dirname, '../../..');

const FIXTURE = join(ROOT, 'examples/drizzle-kit-consumer');

/** Packs the package as `npm publish` would (the `dist/` that `npm run build` made) into `folder`; returns the tarball. */
export function packPackage(folder: string): string {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', folder], {
      cwd: ROOT,
      encoding: 'utf8',
    }),
  ) as Array<{ filename: string }>;
  return join(folder, packed!.filename);
}

/** Unpacks a tarball of {@link packPackage} into `folder` (a package's root: package.json, dist/, drizzle/). */
export function unpackPackage(tarball: string, folder: string): void {
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', folder, '--strip-components=1']);
}

/**
 * Copies `examples/drizzle-kit-consumer` into `folder` and installs what `npm install` would: the packed package
 * (with its bin), and drizzle-orm, drizzle-kit and postgres (the repository's, linked), with their bins.
 */
export function createConsumerProject(folder: string, tarball: string): void {
  for (const file of ['schema.ts', 'drizzle.config.ts', 'package.json', 'tsconfig.json'])
    cpSync(join(FIXTURE, file), join(folder, file));
  mkdirSync(join(folder, 'node_modules/.bin'), { recursive: true });
  for (const dependency of ['drizzle-orm', 'drizzle-kit', 'postgres', 'typescript', '@types']) {
    symlinkSync(join(ROOT, 'node_modules', dependency), join(folder, 'node_modules', dependency), 'dir');
  }
  symlinkSync(join(ROOT, 'node_modules/drizzle-kit/bin.cjs'), join(folder, 'node_modules/.bin/drizzle-kit'));
  installPackage(folder, tarball);
}

/**
 * Installs a packed package into the project's `node_modules/agent-history` as npm does (a copy, so that it
 * resolves drizzle-orm from the project, and its bin linked and executable): an upgrade is this with a newer one.
 */
export function installPackage(folder: string, tarball: string): void {
  const target = join(folder, 'node_modules/agent-history');
  unpackPackage(tarball, target);
  const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  for (const [name, file] of Object.entries(manifest.bin)) {
    chmodSync(join(target, file), 0o755);
    rmSync(join(folder, 'node_modules/.bin', name), { force: true });
    symlinkSync(join('../agent-history', file), join(folder, 'node_modules/.bin', name));
  }
}

/**
 * The bash block that follows the `<!-- marker: … -->` comment in README.md, or, while README.md has no such
 * marker, in `examples/drizzle-kit-consumer/README.md`.
 */
export function readmeBlock(marker: string): string {
  for (const file of [join(ROOT, 'README.md'), join(FIXTURE, 'README.md')]) {
    const text = readFileSync(file, 'utf8');
    const at = text.indexOf(`<!-- ${marker}:`);
    if (at < 0) continue;
    const block = /```bash\n([\s\S]*?)```/.exec(text.slice(at));
    if (!block) throw new Error(`${file} has no bash block after <!-- ${marker}: -->`);
    return block[1]!;
  }
  throw new Error(`neither README.md nor examples/drizzle-kit-consumer/README.md has a <!-- ${marker}: --> marker`);
}

/** What a bash script printed and how it exited. */
export interface ScriptResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` with bash in `folder` with `DATABASE_URL`, `node` and `npx` being the repository's Node 22. */
export function runBash(folder: string, script: string, databaseUrl: string): ScriptResult {
  const { status, stdout, stderr } = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: folder,
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: databaseUrl, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
  });
  return { status, stdout, stderr };
}

/** {@link runBash} that must succeed: its stdout, or an error with everything it printed. */
export function runScript(folder: string, script: string, databaseUrl: string): string {
  const result = runBash(folder, script, databaseUrl);
  if (result.status === 0) return result.stdout;
  throw new Error(
    `bash exited ${result.status}\n--- script\n${script}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
  );
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
