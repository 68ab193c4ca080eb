// The demo's wall time: `npm run demo` as a child process, when package.json has the script and its file exists.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export async function measureDemo(
  root: string,
): Promise<{ skipped: string } | { wallMs: number; exitCode: number | null; tail: string }> {
  const script: string | undefined = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts?.demo;
  const file = script?.match(/tsx\s+(\S+)/)?.[1];
  if (!script) return { skipped: 'package.json has no "demo" script' };
  if (file && !existsSync(join(root, file))) return { skipped: `${file} does not exist yet` };
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'demo'], {
      cwd: root,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
    child.stderr.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
    child.on('close', (exitCode) =>
      resolve({
        wallMs: Math.round(performance.now() - started),
        exitCode,
        tail: output.trim().split('\n').slice(-5).join('\n'),
      }),
    );
  });
}
