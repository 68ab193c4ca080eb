import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../fixtures/crashing-writer.ts', import.meta.url));

/**
 * Runs the crashing writer in a child Node process (through tsx), waits until it printed `ready` (its
 * checkpoints are committed), SIGKILLs it and waits for it to exit. Returns the lines it printed.
 */
export async function runAndKillWriter(args: {
  appUrl: string;
  tenantId: string;
  threadId: string;
  messageId: string;
  checkpoints: number;
  leaseMs: number;
}): Promise<string[]> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      SCRIPT,
      args.appUrl,
      args.tenantId,
      args.threadId,
      args.messageId,
      String(args.checkpoints),
      String(args.leaseMs),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      if (lines.includes('ready')) resolve();
    });
    void exited.then(({ code }) => reject(new Error(`the writer exited (${code}) before it was ready: ${stderr}`)));
  });
  child.kill('SIGKILL');
  const { signal } = await exited;
  if (signal !== 'SIGKILL') throw new Error(`the writer ended by ${signal}, not SIGKILL`);
  return lines;
}
