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
  const aptGet = (args: string[]) =>
    spawnSync('apt-get', args, {
      encoding: 'utf8',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' },
    });
  const failed = (args: string[], result: ReturnType<typeof aptGet>) =>
    new Error(`apt-get ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}`);
  // Another run on the machine may be installing at the same moment. apt-get install waits for dpkg's lock when
  // given a timeout; apt-get update fails at once on a held lock of its lists, so it is tried again for as long.
  const LOCK_TIMEOUT_S = 600;
  if (!listsUpdated) {
    const update = ['update', '-qq'];
    for (const giveUpAt = Date.now() + LOCK_TIMEOUT_S * 1000; ;) {
      const result = aptGet(update);
      if (result.status === 0) break;
      if (!result.stderr.includes('Could not get lock') || Date.now() > giveUpAt) throw failed(update, result);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
    }
    listsUpdated = true;
  }
  const install = ['install', '-y', '-qq', '-o', `DPkg::Lock::Timeout=${LOCK_TIMEOUT_S}`, ...packages];
  const installed = aptGet(install);
  if (installed.status !== 0) throw failed(install, installed);
  const stillMissing = missing.filter((program) => !locate(program));
  if (stillMissing.length > 0)
    throw new Error(`apt-get installed ${packages.join(' ')}, but ${stillMissing[0]!.paths.join(' or ')} is missing.`);
}

/** Where `program` is installed (installed first if need be, as above). */
export function requireDebianProgram(program: DebianProgram): string {
  requireDebianPrograms([program]);
  return locate(program)!;
}
