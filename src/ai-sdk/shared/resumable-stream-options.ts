/**
 * How answers are made resumable (`resumable` of `createChatHandler` and `streamChatTurn`): while an answer streams,
 * its UI message chunks are written to the store's chunk log in batches, so that `useChat({ resume: true })` can
 * replay it from its start, from another request or another process, exactly once and in order.
 */
export interface ResumableStreamOptions {
  /**
   * How long chunks are gathered into one write (one short transaction and a `pg_notify`). The first chunk is written
   * at once; a write in flight holds the next batch back until it commits, so batches never pile up.
   * @default 50
   */
  flushMs?: number;
  /**
   * How long a finished answer's log is kept for readers still replaying it; then it is deleted (and, when an answer
   * ends, every older log of its thread whose answer ended, such as one a crashed process left).
   * @default 60_000
   */
  retainMs?: number;
  /**
   * How a reader learns that the log grew: `'listen'` (LISTEN/NOTIFY, with a slow poll as a safety net; falls back
   * to `'poll'` when the driver cannot LISTEN) or `'poll'` (PgBouncer in transaction mode, for example).
   * @default 'listen'
   */
  notifications?: 'listen' | 'poll';
  /** How often a reader reads the log without a notification. @default 1000 with `'listen'`, 100 with `'poll'` */
  pollMs?: number;
  /**
   * How long a reader waits for the log's last batch once the answer is no longer pending or streaming (stopped or
   * recovered elsewhere, or its last write failed), before it ends the stream.
   * @default 3000
   */
  settleMs?: number;
}

/** The options with their defaults; `undefined` when resuming is off. */
export function resolveResumableStreamOptions(
  option: boolean | ResumableStreamOptions | undefined,
): Required<ResumableStreamOptions> | undefined {
  if (!option) return undefined;
  const given = option === true ? {} : option;
  const notifications = given.notifications ?? 'listen';
  return {
    flushMs: given.flushMs ?? 50,
    retainMs: given.retainMs ?? 60_000,
    notifications,
    pollMs: given.pollMs ?? (notifications === 'listen' ? 1000 : 100),
    settleMs: given.settleMs ?? 3000,
  };
}
