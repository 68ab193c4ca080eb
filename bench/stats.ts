// Percentiles of one run's samples, and min / median / max across runs.

export interface Summary {
  n: number;
  mean: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

export function summarize(values: number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    n: sorted.length,
    mean: round(total / sorted.length, 3),
    min: round(sorted[0]!, 3),
    p50: round(percentile(sorted, 50), 3),
    p95: round(percentile(sorted, 95), 3),
    p99: round(percentile(sorted, 99), 3),
    max: round(sorted[sorted.length - 1]!, 3),
  };
}

/** The spread of one figure over the runs. */
export interface Spread {
  min: number;
  median: number;
  max: number;
  runs: number[];
}

export function spread(values: number[]): Spread | null {
  const present = values.filter((value) => Number.isFinite(value));
  if (present.length === 0) return null;
  const sorted = [...present].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { min: sorted[0]!, median, max: sorted[sorted.length - 1]!, runs: present };
}
