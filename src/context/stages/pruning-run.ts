import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRemoval } from '../segments/context-removal.js';

/** What one application of a pruning decision collects over the segments. */
export interface PruningRun {
  /** Counts what is removed. */
  measure: ContextMeasure;
  /** `measurePrices(measure)`: removals estimated with the same prices are reused. */
  prices: object | undefined;
  /** Tool calls whose traffic to remove. */
  toolCallIds: ReadonlySet<string>;
  /** Approval id → tool call id, over every segment. */
  approvalToCall: ReadonlyMap<string, string>;
  /** What was removed, per segment and step. */
  removed: ContextRemoval[];
  /** Sequences whose reasoning was removed. */
  reasoningSequences: number[];
  /** Tool calls whose traffic was removed. */
  removedToolCallIds: Set<string>;
  /** Each removed call with the sequence of a segment it was removed from. */
  toolCallSequences: Array<[string, number | null]>;
}
