import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { CliError } from './cli-error.js';

/** The config file names drizzle-kit users write, in the order they are looked for. */
const CONFIG_FILES = ['drizzle.config.ts', 'drizzle.config.mts', 'drizzle.config.js', 'drizzle.config.mjs'];

/** An entry of a drizzle-kit migrations folder's `meta/_journal.json`. */
export interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
}

/** The drizzle-kit project in the working folder: its config file, if found, and its migrations folder. */
export interface DrizzleProject {
  /** The config file (`--config`, or the first `drizzle.config.*` found), relative to the working folder. */
  config: string | undefined;
  /** The migrations folder: `--out`, else the config's `out`, else `./drizzle`; absolute. */
  out: string;
}

/**
 * Finds the project's config and migrations folder. `out` is read from the config only when it is written as a plain
 * string (`out: './migrations'`); otherwise pass `--out`. drizzle-kit resolves it from the working folder, as here.
 */
export function locateProject(cwd: string, config: string | undefined, out: string | undefined): DrizzleProject {
  if (config !== undefined && !existsSync(resolve(cwd, config)))
    throw new CliError(`agent-history: the drizzle config ${JSON.stringify(config)} does not exist.`, 2);
  const found = config ?? CONFIG_FILES.find((file) => existsSync(join(cwd, file)));
  const configured =
    found === undefined ? undefined : /\bout\s*:\s*(['"`])([^'"`$]+)\1/.exec(readFileSync(resolve(cwd, found), 'utf8'));
  return { config: found, out: resolve(cwd, out ?? configured?.[2] ?? './drizzle') };
}

/** The entries of the folder's journal, in order; none when drizzle-kit has written no migration there yet. */
export function readJournal(out: string): JournalEntry[] {
  const path = join(out, 'meta', '_journal.json');
  if (!existsSync(path)) return [];
  return (JSON.parse(readFileSync(path, 'utf8')) as { entries: JournalEntry[] }).entries;
}

/** The SQL of a journal entry's migration file (empty when the file is missing). */
export function migrationSql(out: string, entry: JournalEntry): string {
  const path = join(out, `${entry.tag}.sql`);
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/** A path as the user reads it: relative to the working folder. */
export function shown(cwd: string, path: string): string {
  return relative(cwd, path) || '.';
}

/** The project's own `node_modules/.bin/drizzle-kit`, looked for in the working folder and each folder above it. */
export function findDrizzleKit(cwd: string): string {
  const name = process.platform === 'win32' ? 'drizzle-kit.cmd' : 'drizzle-kit';
  for (let folder = resolve(cwd); ; folder = dirname(folder)) {
    const bin = join(folder, 'node_modules', '.bin', name);
    if (existsSync(bin)) return bin;
    if (dirname(folder) === folder) break;
  }
  throw new CliError(
    `agent-history: drizzle-kit was not found in node_modules/.bin of ${resolve(cwd)} or a folder above it. ` +
      'Install it in your project (npm install --save-dev drizzle-kit), then run this again.',
  );
}

/**
 * Runs drizzle-kit with `args` in the working folder, its output shown as it comes (drizzle-kit may ask about a
 * rename), on the Node that runs this command. Throws a {@link CliError} when it exits non-zero.
 */
export function runDrizzleKit(bin: string, cwd: string, args: readonly string[]): void {
  const result = spawnSync(bin, args, {
    cwd,
    stdio: 'inherit',
    shell: process.platform === 'win32',
    env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` },
  });
  if (result.error) throw new CliError(`agent-history: could not run ${bin}: ${result.error.message}`);
  if (result.status !== 0)
    throw new CliError(
      `agent-history: drizzle-kit ${args.join(' ')} failed (exit code ${result.status ?? result.signal}).`,
    );
}
