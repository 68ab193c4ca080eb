import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './consumer-project.js';

/** How many migrations the 1.0 release shipped (its baseline): what every upgrade starts from. */
export const BASELINE_MIGRATIONS = 3;

/** The last commit before the first migration after the baseline was added: the 1.0 release's code. */
export function releaseOneCommit(): string {
  const journal = 'drizzle/meta/_journal.json';
  for (const commit of execFileSync('git', ['log', '--format=%H', '--', journal], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .split('\n')) {
    const entries = (
      JSON.parse(execFileSync('git', ['show', `${commit}:${journal}`], { cwd: ROOT, encoding: 'utf8' })) as {
        entries: unknown[];
      }
    ).entries;
    if (entries.length === BASELINE_MIGRATIONS) {
      // The newest commit whose journal is the baseline's: the code up to the commit that changed the journal next.
      const next = execFileSync('git', ['log', '--format=%H', `${commit}..HEAD`, '--', journal], {
        cwd: ROOT,
        encoding: 'utf8',
      })
        .trim()
        .split('\n')
        .at(-1)!;
      return execFileSync('git', ['rev-parse', `${next}^`], { cwd: ROOT, encoding: 'utf8' }).trim();
    }
  }
  throw new Error('no commit has the 1.0 baseline journal');
}

/**
 * The 1.0 release's package built from its commit in `folder`/source with the repository's own node_modules
 * (package.json, dist/, drizzle/); returns the path of its tarball, packed as `npm publish` would.
 */
export function buildReleaseOne(folder: string): string {
  const source = join(folder, 'source');
  if (!existsSync(join(source, 'dist'))) {
    mkdirSync(source, { recursive: true });
    // What the package is made of (its `files`, less the docs, and what builds it).
    const archive = join(folder, 'release-one.tar');
    const paths = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'drizzle'];
    execFileSync('git', ['archive', '--format=tar', `--output=${archive}`, releaseOneCommit(), ...paths], {
      cwd: ROOT,
    });
    execFileSync('tar', ['-xf', archive, '-C', source]);
    symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
    execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: source, stdio: 'pipe' });
  }
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', folder], {
      cwd: source,
      encoding: 'utf8',
    }),
  ) as Array<{ filename: string }>;
  return join(folder, packed!.filename);
}
