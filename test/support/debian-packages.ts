import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** A program the tests run, from one of Debian's packages. */
export interface DebianProgram {
  /** The Debian package that installs it. */
  package: string;
  /** Where the package puts it; the first that exists is used. */
  paths: string[];
  /** The environment variable that points the tests at another copy instead (the callers read it). */
  override: string;
}

/** PostgreSQL 15's server programs (the path is initdb's; psql comes with them as a dependency). */
export const POSTGRESQL_15: DebianProgram = {
  package: 'postgresql-15',
  paths: ['/usr/lib/postgresql/15/bin/initdb'],
  override: 'PG_BIN',
};

export const PGBOUNCER: DebianProgram = {
  package: 'pgbouncer',
  paths: ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'],
  override: 'PGBOUNCER_BIN',
};

const locate = (program: DebianProgram) => program.paths.find((path) => existsSync(path));

let listsUpdated = false;

/**
 * Makes sure every program of `programs` is installed. When some are missing and this
 * process is root, installs their Debian packages with one `apt-get install` (after one `apt-get update` per
 * process), the way the Next.js example's end-to-end script installs Chromium. Not root: throws, naming the one
 * command that installs them.
 */
export function requireDebianPrograms(
  programs: DebianProgram[],
  { root = process.getuid?.() === 0 }: { root?: boolean } = {},
): void {
  const missing = programs.filter((program) => !locate(program));
  if (missing.length === 0) return;
  const packages = missing.map((program) => program.package);
  const what = missing.map((program) => `${program.package} (no ${program.paths.join(' or ')})`).join(' and ');
  if (!root) {
    throw new Error(
      `The tests need ${what}; the test setup installs Debian packages only when it runs as root. Run:\n` +
        `  sudo sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages.join(' ')}'\n` +
        `or point ${missing.map((program) => program.override).join(' / ')} at another copy.`,
    );
  }
  if (!existsSync('/usr/bin/apt-get'))
    throw new Error(`The tests need ${what}, and there is no apt-get to install it.`);
  process.stderr.write(`test setup: installing Debian's ${packages.join(' ')}…\n`);
  const aptGet = (args: string[]) => {
    // Another run on the machine may be installing at the same moment: the lock timeout waits for its dpkg.
    const result = spawnSync('apt-get', args, {
      encoding: 'utf8',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0)
      throw new Error(`apt-get ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}`);
  };
  if (!listsUpdated) {
    aptGet(['update', '-qq']);
    listsUpdated = true;
  }
  aptGet(['install', '-y', '-qq', '-o', 'DPkg::Lock::Timeout=600', ...packages]);
  const stillMissing = missing.filter((program) => !locate(program));
  if (stillMissing.length > 0)
    throw new Error(`apt-get installed ${packages.join(' ')}, but ${stillMissing[0]!.paths.join(' or ')} is missing.`);
}

/** Where `program` is installed (installed first if need be, as above). */
export function requireDebianProgram(program: DebianProgram): string {
  requireDebianPrograms([program]);
  return locate(program)!;
}
