/** Why a stage left something out of the context. Noun-first tags, one per cause. */
export type ContextRemovalReason =
  | 'message-invalid'
  | 'part-invalid'
  | 'message-deleted'
  | 'message-excluded'
  | 'message-redacted'
  | 'message-unfinished'
  | 'message-system'
  | 'message-empty'
  | 'reasoning-pruned'
  | 'tool-traffic-pruned'
  | 'turn-summarized'
  | 'turn-trimmed'
  | 'round-trimmed'
  | 'memory-dropped'
  | 'working-memory-dropped'
  | 'recalled-dropped'
  | 'summary-dropped'
  | 'tool-output-previewed';

/** One thing a stage removed or shortened, with the (estimated) tokens it saved. */
export interface ContextRemoval {
  /** The sequence of the stored message it came from; null for messages not stored yet, the summary or the memory. */
  sequence: number | null;
  /** Why it was removed. */
  reason: ContextRemovalReason;
  /** The tokens saved, in model-estimated tokens (for validate and filter: the stored raw count, 0 when unknown). */
  tokens: number;
  /** The tool call concerned, for tool traffic and previews. */
  toolCallId?: string;
  /** A short human-readable explanation, for invalid input. */
  detail?: string;
}

/** Sums the `tokens` of removals. */
export function sumRemovedTokens(removed: readonly ContextRemoval[]): number {
  let total = 0;
  for (const removal of removed) total += removal.tokens;
  return total;
}
