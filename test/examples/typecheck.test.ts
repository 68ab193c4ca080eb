import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';

const root = resolve(import.meta.dirname, '../..');

describe('the TypeScript sources', () => {
  it(
    'should type-check: src, tests, benchmarks and the examples (demo, node agent, migrate)',
    () => {
      let output = '';
      try {
        execFileSync(join('node_modules/.bin/tsc'), ['--noEmit', '-p', 'tsconfig.json'], {
          cwd: root,
          encoding: 'utf8',
          stdio: 'pipe',
        });
      } catch (error) {
        output = String((error as { stdout?: string }).stdout ?? error);
      }
      expect(output).toBe('');
    },
    SUBPROCESS_TIMEOUT_MS,
  );
});

function join(path: string) {
  return resolve(root, path);
}
