/**
 * How long a test waits at most for something that comes about by itself: a row the server settles after its
 * client went away, a statement reaching its lock wait, a log deleted after its retention. Each takes milliseconds
 * on a quiet machine; this is far beyond what a loaded two-core machine needs, so that only a condition that never
 * comes fails (with a message naming it, before the test's own timeout). Also `expect.poll`'s default (the
 * vitest configs).
 */
export const SETTLE_TIMEOUT_MS = 30_000;

/**
 * Per-test time for the tests that run npm, pnpm, tsc, tsx or drizzle-kit in child processes: each takes seconds
 * alone and minutes on a loaded machine, where shorter limits failed them (a timeout, not a wrong result).
 */
export const SUBPROCESS_TIMEOUT_MS = 900_000;

/** The limit of one child process that may hang (a snippet or demo that never exits): killed before its test ends. */
export const CHILD_PROCESS_TIMEOUT_MS = SUBPROCESS_TIMEOUT_MS - 60_000;

/**
 * Polls `check` until it returns something other than `undefined` or `false`, and returns that. Fails after
 * {@link SETTLE_TIMEOUT_MS}, naming `what` it waited for. A `check` that sees the condition can no longer come
 * (the work it waits on ended) should throw at once rather than let the wait run out.
 *
 * @example
 * const pid = await waitUntil('the append to wait on the lock', async () => (await lockWaiters())[0]?.pid);
 */
export async function waitUntil<VALUE>(
  what: string,
  check: () => Promise<VALUE | undefined | false> | VALUE | undefined | false,
  { timeoutMs = SETTLE_TIMEOUT_MS, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<VALUE> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
