/**
 * How much bigger than the CI-sized run a reliability suite runs: `RELIABILITY_SCALE=10 npx vitest run test/reliability`.
 * Every attempt count is multiplied by it. @default 1
 */
export const RELIABILITY_SCALE = readScale(process.env.RELIABILITY_SCALE);

function readScale(value: string | undefined): number {
  if (value === undefined || value === '') return 1;
  const scale = Number(value);
  if (!Number.isFinite(scale) || scale <= 0)
    throw new Error(`RELIABILITY_SCALE must be a positive number, got ${JSON.stringify(value)}`);
  return scale;
}

/** `count` times the scale, rounded up. */
export function scaled(count: number): number {
  return Math.ceil(count * RELIABILITY_SCALE);
}

/**
 * A time budget that grows with the scale: `timeout(60_000)` is 60 s at scale 1 and 600 s at scale 10,
 * plus a fixed allowance for setup.
 */
export function scaledTimeout(milliseconds: number): number {
  return Math.ceil(milliseconds * Math.max(1, RELIABILITY_SCALE)) + 60_000;
}
