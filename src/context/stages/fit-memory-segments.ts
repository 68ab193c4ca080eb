import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import {
  estimateSegments,
  type ContextSegment,
  type RecalledSegment,
  type WorkingMemorySegment,
} from '../segments/context-segment.js';
import type { MemorySegmentEntry, MemorySegmentsStageReport } from '../contracts/stage-reports.js';

/** The working memory or one recalled item: the segments that come from outside the thread. */
export type MemoryItemSegment = WorkingMemorySegment | RecalledSegment;

/** Whether the segment is the working memory or a recalled item. */
export function isMemoryItemSegment(segment: ContextSegment): segment is MemoryItemSegment {
  return segment.kind === 'working-memory' || segment.kind === 'recalled';
}

/**
 * Splits a context into its history (every other segment, in order) and its working memory and recalled items, so
 * that the history stages run as if there were none: memory never costs the history a token.
 */
export function setMemoryAside(segments: readonly ContextSegment[]): {
  history: ContextSegment[];
  memory: MemoryItemSegment[];
} {
  const history: ContextSegment[] = [];
  const memory: MemoryItemSegment[] = [];
  for (const segment of segments) (isMemoryItemSegment(segment) ? memory : history).push(segment);
  return { history, memory };
}

/**
 * The order memory is kept in, and dropped in reverse: the working memory, then the recalled items best first (by
 * score, then id, so that the order never depends on the store's).
 */
export function orderMemorySegments(memory: readonly MemoryItemSegment[]): MemoryItemSegment[] {
  const rank = (segment: MemoryItemSegment) => (segment.kind === 'working-memory' ? 0 : 1);
  return [...memory].sort((a, b) => {
    if (rank(a) !== rank(b)) return rank(a) - rank(b);
    if (a.kind !== 'recalled' || b.kind !== 'recalled') return 0;
    return b.item.score - a.item.score || (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : 0);
  });
}

/** What `loadMemorySegments` found. */
export interface LoadedMemorySegments {
  /** The working memory and the recalled items within the recall limit, in the order they are kept. */
  memory: MemoryItemSegment[];
  /** Recalled items over `policy.memory.recall.maxTokens` (not included). */
  leftOut: MemorySegmentEntry[];
  /** How the store recalled. */
  recall: NonNullable<MemorySegmentsStageReport['recall']>;
}

/** Options of {@link fitMemorySegments}. */
export interface FitMemorySegmentsOptions {
  /** The history as the other stages made it fit the budget. */
  segments: readonly ContextSegment[];
  /** The working memory and recalled items the context held already (a step's), in any order. */
  carried: readonly MemoryItemSegment[];
  /** Those loaded for this context (`loadMemorySegments`), or null. Duplicates by kind and id are kept once. */
  loaded: LoadedMemorySegments | null;
  /** Prices the segments. */
  measure: ContextMeasure;
  /** The budget for all messages. */
  messageBudget: number;
}

/**
 * The memory-segments stage, last: puts the working memory and the recalled items first (after the instructions,
 * before the summary and the turns), in {@link orderMemorySegments}'s order, keeping the longest run of them that fits
 * the room the history left in `messageBudget`. So when the budget is short they go whole, lowest-scored item first
 * and the working memory last, before any turn (the history was fitted without them); the context never exceeds the
 * budget because of them. Idempotent.
 */
export function fitMemorySegments({ segments, carried, loaded, measure, messageBudget }: FitMemorySegmentsOptions): {
  segments: ContextSegment[];
  report: MemorySegmentsStageReport | null;
} {
  const memory = [...carried, ...(loaded?.memory ?? [])];
  if (!loaded && memory.length === 0) return { segments: [...segments], report: null };
  let room = messageBudget - estimateSegments(segments, measure);
  const seen = new Set<string>();
  const kept: MemoryItemSegment[] = [];
  const entries: Array<MemorySegmentEntry & { kind: MemoryItemSegment['kind'] }> = [];
  const removed: ContextRemoval[] = [];
  let full = false;
  for (const segment of orderMemorySegments(memory)) {
    const entry = entryOf(segment, measure);
    if (seen.has(`${segment.kind}:${entry.id}`)) continue;
    seen.add(`${segment.kind}:${entry.id}`);
    full ||= entry.tokens > room;
    if (!full) {
      room -= entry.tokens;
      kept.push(segment);
    } else {
      const reason = segment.kind === 'working-memory' ? 'working-memory-dropped' : 'recalled-dropped';
      removed.push({ sequence: null, reason, tokens: entry.tokens });
    }
    entries.push({ ...entry, kind: segment.kind, included: !full });
  }
  const workingMemory = entries.find((entry) => entry.kind === 'working-memory');
  const recalled = [...entries.filter((entry) => entry.kind === 'recalled'), ...(loaded?.leftOut ?? [])];
  return {
    segments: [...kept, ...segments],
    report: {
      stage: 'memory-segments',
      recall: loaded?.recall ?? null,
      workingMemory: workingMemory ? withoutKind(workingMemory) : null,
      recalled: recalled.map(withoutKind),
      // In the order they go: the lowest-scored recalled item first, the working memory last.
      removed: removed.reverse(),
      tokensSaved: removed.reduce((sum, removal) => sum + removal.tokens, 0),
    },
  };
}

/** How a memory segment is listed in the report. */
export function entryOf(segment: MemoryItemSegment, measure: ContextMeasure): MemorySegmentEntry {
  const tokens = measure.estimate(segment.tokens);
  if (segment.kind === 'working-memory')
    return { id: segment.workingMemory.id, version: segment.workingMemory.version, tokens, included: true };
  const { item } = segment;
  return {
    id: item.id,
    version: item.sourceContentVersion,
    source: {
      threadId: item.sourceThreadId,
      messageId: item.sourceMessageId,
      sequence: item.sourceSequence,
      score: item.score,
      via: item.via,
    },
    tokens,
    included: true,
  };
}

function withoutKind({ kind: _kind, ...entry }: MemorySegmentEntry & { kind?: string }): MemorySegmentEntry {
  return entry;
}
