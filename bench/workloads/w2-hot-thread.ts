// W2 hot thread: one thread, A concurrent appenders sharing a budget of N messages. Verifies, for every peer:
//  - lost / duplicates: acknowledged appends missing from the thread, ids loaded twice;
//  - writerInversions: an appender's own (sequential) appends loading out of its order;
//  - realtimeInversions: pairs where append a was acknowledged before append b started, yet a loads after b;
//  - landedBehindCommitted: messages that, at their commit (server commit timestamps, track_commit_timestamp),
//    sorted before a message already committed — a reader tailing with `WHERE key > last_seen` never sees them.
// agent-history adds a check on its order key by direct SQL: sequences 1..N with no gap and no duplicate,
// next_sequence = N, and the sequence order equal to the commit order (commit timestamps strictly increase
// with the sequence). That holds by construction — the thread row lock serializes appenders, and the next one
// can only take the lock once the previous transaction's commit is done — and this checks it happened.
import { performance } from 'node:perf_hooks';
import type { MessageFactory } from '../messages.js';
import type { AppendPeer } from '../peers/peer.js';
import { cpuPerOperation, withoutPause, type CpuMeter } from '../cpu.js';
import { round, summarize } from '../stats.js';

interface AppendRecord {
  id: string;
  writer: number;
  start: number;
  end: number;
}

export async function runW2HotThread<SEQUENCES = undefined>(
  peer: AppendPeer,
  factory: MessageFactory,
  { appenders, messages }: { appenders: number; messages: number },
  meter?: CpuMeter,
  checkBeforeSettle?: (threadId: string) => Promise<SEQUENCES>,
) {
  const threadId = await peer.createThread();
  const records: AppendRecord[] = [];
  const latencies: number[] = [];
  const errors: unknown[] = [];
  let next = 0;
  const cpuBefore = await meter?.();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: appenders }, async (_, writer) => {
      for (let k = next++; k < messages; k = next++) {
        const message = factory.make(k);
        const start = performance.now();
        try {
          await peer.append(threadId, message);
          const end = performance.now();
          latencies.push(end - start);
          records.push({ id: message.id, writer, start, end });
        } catch (error) {
          errors.push(error);
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  // The commit order is read before the store's background work, which rewrites rows (and so their xmin): out of
  // the CPU and WAL measured.
  const paused = await meter?.();
  const byCommit = await peer.idsByCommit(threadId);
  const sequences = await checkBeforeSettle?.(threadId);
  const resumed = await meter?.();
  const settleStarted = performance.now();
  await peer.settle?.();
  const settledMs = wallMs + performance.now() - settleStarted;
  const end = await meter?.();
  const cpu =
    cpuBefore && paused && resumed && end
      ? cpuPerOperation(cpuBefore, withoutPause(paused, resumed, end), latencies.length)
      : undefined;

  const loaded = await peer.loadAllIds(threadId);
  const position = new Map<string, number>();
  loaded.forEach((id, index) => position.has(id) || position.set(id, index));
  const lost = records.filter((record) => !position.has(record.id)).length;
  const duplicates = loaded.length - position.size;
  const present = records.filter((record) => position.has(record.id));
  let realtimeInversions = 0;
  for (const a of present) {
    for (const b of present) if (a.end < b.start && position.get(a.id)! > position.get(b.id)!) realtimeInversions++;
  }
  let writerInversions = 0;
  const byWriter = new Map<number, AppendRecord[]>();
  for (const record of present) byWriter.set(record.writer, [...(byWriter.get(record.writer) ?? []), record]);
  for (const list of byWriter.values()) {
    list.sort((x, y) => x.start - y.start);
    for (let index = 1; index < list.length; index++)
      if (position.get(list[index]!.id)! < position.get(list[index - 1]!.id)!) writerInversions++;
  }
  let landedBehindCommitted = 0;
  let highest = -1;
  for (const id of byCommit) {
    const at = position.get(id);
    if (at === undefined) continue;
    if (at < highest) landedBehindCommitted++;
    else highest = at;
  }
  const ok =
    errors.length === 0 &&
    lost === 0 &&
    duplicates === 0 &&
    realtimeInversions === 0 &&
    writerInversions === 0 &&
    landedBehindCommitted === 0;
  return {
    threadId,
    /** What `checkBeforeSettle` found, read with the commit order. */
    sequences,
    appends: records.length,
    errors: errors.length,
    firstError: errors.length
      ? String((errors[0] as Error)?.stack ?? errors[0])
          .split('\n')
          .slice(0, 3)
          .join(' | ')
      : undefined,
    wallMs: round(wallMs, 1),
    /** Appends per second until the store's background work on them was done too (as appendsPerSecond without any). */
    settledAppendsPerSecond: round((records.length / settledMs) * 1000, 1),
    appendsPerSecond: round((records.length / wallMs) * 1000, 1),
    latencyMs: summarize(latencies),
    /** CPU ms per append while appending: this process, the database server, both. */
    cpuMsPerAppend: cpu,
    verify: {
      loadedRows: loaded.length,
      lost,
      duplicates,
      writerInversions,
      realtimeInversions,
      landedBehindCommitted,
      ok,
    },
  };
}
