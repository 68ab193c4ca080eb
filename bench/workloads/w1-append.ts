// W1 append: T threads × M messages, each thread appended sequentially (one message per call), C threads in
// flight. Then every thread is read back and must hold exactly its messages, in append order.
import { performance } from 'node:perf_hooks';
import type { MessageFactory } from '../messages.js';
import type { AppendPeer } from '../peers/peer.js';
import { cpuPerOperation, type CpuMeter } from '../cpu.js';
import { round, summarize } from '../stats.js';

export interface W1Options {
  threads: number;
  messages: number;
  concurrency: number;
}

export async function runW1Append(
  peer: Pick<AppendPeer, 'createThread' | 'append' | 'loadAllIds' | 'settle'>,
  factory: MessageFactory,
  { threads, messages, concurrency }: W1Options,
  meter?: CpuMeter,
) {
  const threadIds: string[] = [];
  for (let index = 0; index < threads; index++) threadIds.push(await peer.createThread());
  const appended: string[][] = threadIds.map(() => []);
  const latencies: number[] = [];
  const errors: unknown[] = [];
  let next = 0;
  let bytes = 0;
  const cpuBefore = await meter?.();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let thread = next++; thread < threads; thread = next++) {
        for (let k = 0; k < messages; k++) {
          const template = 34 * thread + k; // the parity of k decides user / assistant
          const message = factory.make(template);
          const before = performance.now();
          try {
            await peer.append(threadIds[thread]!, message);
            latencies.push(performance.now() - before);
            appended[thread]!.push(message.id);
            bytes += factory.bytesOf(template);
          } catch (error) {
            errors.push(error);
          }
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  await peer.settle?.();
  const settledMs = performance.now() - started;
  const cpu = meter && cpuBefore ? cpuPerOperation(cpuBefore, await meter(), latencies.length) : undefined;

  let missing = 0;
  let duplicates = 0;
  let threadsOutOfOrder = 0;
  for (let thread = 0; thread < threads; thread++) {
    const loaded = await peer.loadAllIds(threadIds[thread]!);
    const want = appended[thread]!;
    const loadedSet = new Set(loaded);
    duplicates += loaded.length - loadedSet.size;
    missing += want.filter((id) => !loadedSet.has(id)).length;
    if (loaded.length !== want.length || loaded.some((id, index) => id !== want[index])) threadsOutOfOrder++;
  }
  return {
    appends: latencies.length,
    errors: errors.length,
    firstError: errors.length
      ? String((errors[0] as Error)?.stack ?? errors[0])
          .split('\n')
          .slice(0, 3)
          .join(' | ')
      : undefined,
    wallMs: round(wallMs, 1),
    /** Appends per second until the store's background work on them was done too (as appendsPerSecond without any). */
    settledAppendsPerSecond: round((latencies.length / settledMs) * 1000, 1),
    appendsPerSecond: round((latencies.length / wallMs) * 1000, 1),
    payloadMBps: round(bytes / 1e6 / (wallMs / 1000), 2),
    latencyMs: summarize(latencies),
    /** CPU ms per append while appending: this process, the database server, both. */
    cpuMsPerAppend: cpu,
    verify: {
      missing,
      duplicates,
      threadsOutOfOrder,
      ok: errors.length === 0 && missing === 0 && duplicates === 0 && threadsOutOfOrder === 0,
    },
  };
}
