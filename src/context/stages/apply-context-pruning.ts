import { measurePrices, type ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import { findCurrentInputIndex, type ContextSegment, type MessageSegment } from '../segments/context-segment.js';
import { mapApprovalsToCalls } from '../segments/segment-tool-calls.js';
import { pruneSegment } from './prune-segment.js';
import type { PruningRun } from './pruning-run.js';

/** What pruning removed, precisely enough to apply it again ({@link applyContextPruning}); stored in snapshots. */
export interface ContextPruning {
  /** Stored sequences whose reasoning parts were removed. */
  reasoningSequences: number[];
  /** Tool calls whose call, result and approval parts were all removed. */
  toolCallIds: string[];
  /** Each removed tool call with the sequence of a segment it was removed from (null: not stored). */
  toolCallSequences: Array<[toolCallId: string, sequence: number | null]>;
  /** Whether messages left empty were removed. */
  emptyMessages: 'remove' | 'keep';
}

/** Options of {@link applyContextPruning}. */
export interface ApplyContextPruningOptions {
  /** The context, in order. */
  segments: readonly ContextSegment[];
  /** Counts changed messages. */
  measure: ContextMeasure;
  /** Whether to remove the reasoning of a message segment. */
  reasoningFrom: (segment: MessageSegment, index: number) => boolean;
  /** Tool calls whose traffic to remove. */
  toolCallIds: ReadonlySet<string>;
  /** Whether messages left empty are removed. */
  emptyMessages: 'remove' | 'keep';
  /** {@link mapApprovalsToCalls} of `segments`, when the caller has it. @default made from `segments` */
  approvalToCall?: ReadonlyMap<string, string>;
}

/**
 * Applies a pruning decision. {@link pruneContext} decides and calls it; a snapshot rebuild calls it with the
 * stored {@link ContextPruning}, so both produce the same messages. Unchanged segments are returned as the
 * same objects.
 */
export function applyContextPruning({
  segments,
  measure,
  reasoningFrom,
  toolCallIds,
  emptyMessages,
  approvalToCall = toolCallIds.size > 0 ? mapApprovalsToCalls(segments) : new Map<string, string>(),
}: ApplyContextPruningOptions): { segments: ContextSegment[]; removed: ContextRemoval[]; pruning: ContextPruning } {
  const currentInput = findCurrentInputIndex(segments);
  const run: PruningRun = {
    measure,
    prices: measurePrices(measure),
    toolCallIds,
    approvalToCall,
    removed: [],
    reasoningSequences: [],
    removedToolCallIds: new Set<string>(),
    toolCallSequences: [],
  };
  const output: ContextSegment[] = [];
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    if (segment.kind !== 'message') {
      output.push(segment);
      continue;
    }
    const current = pruneSegment(run, segment, reasoningFrom(segment, index), emptyMessages, index === currentInput);
    if (current.messages.length > 0) output.push(current);
  }
  return {
    segments: output,
    removed: run.removed,
    pruning: {
      reasoningSequences: run.reasoningSequences,
      toolCallIds: [...run.removedToolCallIds],
      toolCallSequences: run.toolCallSequences,
      emptyMessages,
    },
  };
}
