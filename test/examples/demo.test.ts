import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CHILD_PROCESS_TIMEOUT_MS, SUBPROCESS_TIMEOUT_MS } from '../support/time-limits.js';

const root = resolve(import.meta.dirname, '../..');

// The README sells `npm run demo` as "budget, pruning, a summary, a snapshot, paging, search": a new user runs it
// first, so each of those must really show in its output (it once ended with "0 summary artifact(s)").
describe('npm run demo', () => {
  it(
    'should show pruning, a written summary, a snapshot, a page of history and search hits, then exit',
    async () => {
      const { stdout } = await promisify(execFile)(resolve(root, 'node_modules/.bin/tsx'), ['examples/demo.ts'], {
        cwd: root,
        env: { ...process.env, OPENAI_API_KEY: '' },
        timeout: CHILD_PROCESS_TIMEOUT_MS, // a demo that never exits fails here
      });
      expect(stdout).toMatch(/stages: prune removed [1-9]/);
      expect(stdout).toMatch(/summary created \(1\.\.\d+\)/);
      expect(stdout).toMatch(/snapshot v\d+ written/);
      const summaries = Number(/\] (\d+) summary artifact\(s\)/.exec(stdout)?.[1]);
      expect(summaries).toBeGreaterThanOrEqual(1);
      expect(stdout).toMatch(/next page starts at #\d+/);
      expect(stdout).toMatch(/#\d+ user: <b>weather<\/b> in <b>Vienna<\/b>/);
      expect(stdout).not.toMatch(/summary failed/);
      expect(stdout).toMatch(/\] done\n$/);
    },
    SUBPROCESS_TIMEOUT_MS,
  );
});
