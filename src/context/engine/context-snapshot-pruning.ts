import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import type { DroppedRound, TrimmedReasoning } from '../stages/shrink-newest-turn.js';

/**
 * What a snapshot records beyond its included sequences, so that the context can be rebuilt from the log
 * exactly (stored in the snapshot's `pruned` column).
 */
export interface ContextSnapshotPruning {
  /** Stored sequences whose reasoning was removed. */
  reasoningSequences: number[];
  /** Tool calls whose traffic was removed. */
  toolCallIds: string[];
  /** Whether empty messages were removed. */
  emptyMessages: 'remove' | 'keep';
  /** Tool outputs replaced by previews. */
  previews: ToolOutputPreview[];
  /** Stored sequences after the boundary that were trimmed away (not represented by the summary). */
  trimmedSequences: number[];
  /** Sequences quoted in the memory message, in order. */
  memorySequences: number[];
  /** Stored messages whose reasoning the final trim removed (all of it, or all but their last assistant message's). */
  trimmedReasoning: TrimmedReasoning[];
  /** Rounds of stored messages the final trim dropped. */
  droppedRounds: DroppedRound[];
}

/** A pruning record with nothing in it. */
export function emptySnapshotPruning(): ContextSnapshotPruning {
  return {
    reasoningSequences: [],
    toolCallIds: [],
    emptyMessages: 'remove',
    previews: [],
    trimmedSequences: [],
    memorySequences: [],
    trimmedReasoning: [],
    droppedRounds: [],
  };
}

/** Reads a stored `pruned` value defensively (unknown JSON); missing fields are empty. */
export function readSnapshotPruning(value: unknown): ContextSnapshotPruning {
  const record = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Record<
    string,
    unknown
  >;
  const numbers = (key: string) =>
    Array.isArray(record[key])
      ? (record[key] as unknown[]).filter((item): item is number => Number.isSafeInteger(item))
      : [];
  const objects = (key: string) =>
    Array.isArray(record[key])
      ? (record[key] as unknown[]).filter(
          (item): item is Record<string, unknown> => typeof item === 'object' && item !== null,
        )
      : [];
  return {
    reasoningSequences: numbers('reasoningSequences'),
    toolCallIds: Array.isArray(record.toolCallIds)
      ? (record.toolCallIds as unknown[]).filter((item): item is string => typeof item === 'string')
      : [],
    emptyMessages: record.emptyMessages === 'keep' ? 'keep' : 'remove',
    previews: Array.isArray(record.previews)
      ? (record.previews as Array<Record<string, unknown>>)
          .filter((item) => typeof item?.toolCallId === 'string' && Number.isSafeInteger(item.maxTokens))
          .map((item) => ({
            toolCallId: item.toolCallId as string,
            maxTokens: item.maxTokens as number,
            ...(item.part === 'input' || item.part === 'content' ? { part: item.part } : {}),
          }))
      : [],
    trimmedSequences: numbers('trimmedSequences'),
    memorySequences: numbers('memorySequences'),
    trimmedReasoning: objects('trimmedReasoning')
      .filter((item) => Number.isSafeInteger(item.sequence))
      .map((item) => ({ sequence: item.sequence as number, exceptLast: item.exceptLast === true })),
    droppedRounds: objects('droppedRounds')
      .filter((item) => Number.isSafeInteger(item.sequence) && typeof item.key === 'string')
      .map((item) => ({ sequence: item.sequence as number, key: item.key as string })),
  };
}
