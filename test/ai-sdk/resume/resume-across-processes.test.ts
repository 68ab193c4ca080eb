import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resumeChatStream } from '../../../src/ai-sdk/index.js';
import { useTestDatabase } from '../../support/test-database.js';
import { SUBPROCESS_TIMEOUT_MS } from '../../support/time-limits.js';
import { newThread } from '../fixtures.js';

const WRITER = fileURLToPath(new URL('../fixtures/resumable-writer.ts', import.meta.url));
const STORY = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');

/** Starts the writer process; resolves its answer's id once begun, and its client's chunks at its end. */
function startWriter(appUrl: string, tenantId: string, threadId: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, appUrl, tenantId, threadId, STORY, '15'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const line = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = stdout.split('\n').find((text) => text.startsWith(prefix));
        if (found) resolve(found.slice(prefix.length));
      };
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        check();
      });
      child.once('exit', (code) => {
        check();
        reject(new Error(`the writer exited (${code}) without "${prefix}": ${stderr}`));
      });
    });
  return { messageId: line('message '), chunks: line('chunks ').then((json) => JSON.parse(json) as unknown[]) };
}

describe('resumeChatStream across processes on postgres', () => {
  const database = useTestDatabase('postgres');

  it(
    'should replay, in this process, an answer another process is streaming: every chunk once, in order',
    async () => {
      const { history, threadId } = await newThread(database);
      const writer = startWriter(database.appUrl!, history.tenantId, threadId);
      const messageId = await writer.messageId;
      let notifications = 0;
      const unsubscribe = await history.subscribeStreamChunks(threadId, messageId, () => notifications++);
      expect(unsubscribe).toBeTypeOf('function');
      const resumed = await resumeChatStream({ history, threadId });
      expect(resumed?.messageId).toBe(messageId);
      const seen: unknown[] = [];
      for await (const chunk of resumed!.stream as unknown as AsyncIterable<unknown>) seen.push(chunk);
      const original = await writer.chunks;
      expect(original.length).toBeGreaterThan(40);
      expect(seen).toEqual(original);
      // The other process's commits woke this one through LISTEN/NOTIFY (the poll alone is once a second).
      expect(notifications).toBeGreaterThan(0);
      unsubscribe!();
    },
    SUBPROCESS_TIMEOUT_MS,
  );
});
