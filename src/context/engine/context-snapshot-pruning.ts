import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import type { DroppedRound, TrimmedReasoning } from '../stages/shrink-newest-turn.js';
import type { ContextRecalledItem } from '../../model/context-store.js';

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
  /** The working memory the context held (its id and version); absent when none. */
  workingMemory?: { id: string; version: number };
  /** The recalled items the context held, in order (ids, sources and content versions); absent when none. */
  recalled?: SnapshotRecalledItem[];
}

/** A recalled item as a snapshot records it. */
export type SnapshotRecalledItem = Pick<
  ContextRecalledItem,
  'id' | 'sourceThreadId' | 'sourceMessageId' | 'sourceSequence' | 'sourceContentVersion'
>;

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
            ...(Number.isSafeInteger(item.sequence) || item.sequence === null
              ? { sequence: item.sequence as number | null }
              : {}),
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
    ...readMemoryItems(record),
  };
}

// The working memory and recalled items, when the snapshot records them.
function readMemoryItems(record: Record<string, unknown>): Pick<ContextSnapshotPruning, 'workingMemory' | 'recalled'> {
  const working = record.workingMemory as Record<string, unknown> | null | undefined;
  const recalled = Array.isArray(record.recalled)
    ? (record.recalled as Array<Record<string, unknown>>).filter(
        (item) =>
          typeof item?.id === 'string' &&
          typeof item.sourceThreadId === 'string' &&
          typeof item.sourceMessageId === 'string' &&
          Number.isSafeInteger(item.sourceSequence) &&
          Number.isSafeInteger(item.sourceContentVersion),
      )
    : [];
  return {
    ...(typeof working?.id === 'string' && Number.isSafeInteger(working.version)
      ? { workingMemory: { id: working.id, version: working.version as number } }
      : {}),
    ...(recalled.length > 0 ? { recalled: recalled.map((item) => recordedItem(item as never)) } : {}),
  };
}

/** What a snapshot records of a recalled item. */
export function recordedItem(item: SnapshotRecalledItem): SnapshotRecalledItem {
  const { id, sourceThreadId, sourceMessageId, sourceSequence, sourceContentVersion } = item;
  return { id, sourceThreadId, sourceMessageId, sourceSequence, sourceContentVersion };
}

/**
 * Whether carrying a snapshot's cut (its `pruned` record) could shorten the text of a stored message before
 * `sequence`: a content preview recorded there (or without its message), or a round dropped there. A window that
 * leaves those messages out cannot count their text as sent whole.
 */
export function shortensTextBefore(pruned: unknown, sequence: number): boolean {
  const recorded = readSnapshotPruning(pruned);
  return (
    recorded.previews.some(
      (preview) => preview.part === 'content' && (preview.sequence == null || preview.sequence < sequence),
    ) || recorded.droppedRounds.some((round) => round.sequence < sequence)
  );
}
