import { performance } from 'node:perf_hooks';
import { round, summarize, type Summary } from '../stats.js';

export interface OperationTiming {
  /** Timed calls after the warm-up. */
  ms: Summary;
  firstCallMs: number;
  /** The warm-up call's result passed the operation's check. */
  correct: boolean;
}

export interface TimedCase {
  key: string;
  operation: () => Promise<unknown>;
  check: (result: any) => boolean;
}

/**
 * Warm-up calls of each case of a short read (a page, a context load), for every store alike: enough for the JIT to
 * compile the code of a call before it is timed, as it is in an app that has served a few requests (with one,
 * a read timed alone, with no workload before it, measured a store's colder code against a driver's warm one).
 */
export const SHORT_READ_WARMUP_CALLS = 20;

/**
 * Times several operations round-robin — one call of each case per round, `rounds` rounds, after `warmupCalls`
 * warm-up calls of each (the first one checked) — so every case samples the same moments of a noisy machine and
 * ratios between cases (growth across sizes, deep page vs first page) compare like with like.
 */
export async function sampleInterleaved(
  cases: TimedCase[],
  rounds: number,
  { warmupCalls = 1 }: { warmupCalls?: number } = {},
): Promise<Map<string, OperationTiming>> {
  const warm = new Map<string, { firstCallMs: number; correct: boolean }>();
  for (const { key, operation, check } of cases) {
    const before = performance.now();
    const result = await operation();
    warm.set(key, { firstCallMs: round(performance.now() - before, 2), correct: check(result) });
  }
  for (let call = 1; call < warmupCalls; call++) for (const { operation } of cases) await operation();
  const samples = new Map<string, number[]>(cases.map(({ key }) => [key, []]));
  for (let index = 0; index < rounds; index++) {
    for (const { key, operation } of cases) {
      const before = performance.now();
      await operation();
      samples.get(key)!.push(performance.now() - before);
    }
  }
  return new Map(cases.map(({ key }) => [key, { ms: summarize(samples.get(key)!), ...warm.get(key)! }]));
}
