import type { NewSnapshot } from '../../model/context-store.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import { renderSegments, type ContextSegment, type SummarySegment } from '../segments/context-segment.js';
import type { ContextBudget } from '../contracts/context-budget.js';
import type { ContextEngineState } from './context-engine-state.js';
import { recordedItem, type ContextSnapshotPruning } from './context-snapshot-pruning.js';
import { hashContextMessages } from './hash-context-messages.js';
import type { ContextStagesResult } from './run-context-stages.js';

/** What {@link decideSnapshot} decided. */
export interface SnapshotDecision {
  /** Whether to write a snapshot. */
  write: boolean;
  /** Stored sequences this compaction trimmed away (selected away without a summary, or dropped by the trim). */
  trimmedSequences: number[];
}

/** Options of {@link decideSnapshot}. */
export interface DecideSnapshotOptions {
  /** Whether the engine loaded the thread ({@link ContextEngineState.loadedThread}). */
  loadedThread: boolean;
  /** What the stages did. */
  stages: Pick<ContextStagesResult, 'reports' | 'summaryCreated'>;
}

/**
 * Decides whether a compaction is worth a snapshot: only when it compacted the stored part of the context (a
 * new summary; stored turns trimmed, payloads previewed, reasoning or rounds trimmed, or tool traffic pruned; the
 * summary or memory dropped),
 * and only by an engine that loaded the thread: one that only ever saw a caller's messages does not know the
 * version and boundary (its snapshot would conflict or describe the wrong log).
 */
export function decideSnapshot({ loadedThread, stages }: DecideSnapshotOptions): SnapshotDecision {
  const { prune, select, trim } = stages.reports;
  const trimmedSequences = [
    ...storedRemovals('turn-trimmed', select.removed),
    ...storedRemovals('turn-trimmed', trim.removed),
  ].map((entry) => entry.sequence as number);
  const previewedStored = storedRemovals('tool-output-previewed', trim.removed);
  const shrunkStored = [
    ...storedRemovals('reasoning-pruned', trim.removed),
    ...storedRemovals('round-trimmed', trim.removed),
  ];
  const toolPrunedStored = storedRemovals('tool-traffic-pruned', prune.removed);
  const droppedArtifacts = trim.removed.some(
    (entry) => entry.reason === 'summary-dropped' || entry.reason === 'memory-dropped',
  );
  const compacted =
    stages.summaryCreated ||
    trimmedSequences.length > 0 ||
    previewedStored.length > 0 ||
    shrunkStored.length > 0 ||
    toolPrunedStored.length > 0 ||
    droppedArtifacts;
  return { write: loadedThread && compacted, trimmedSequences };
}

function storedRemovals(reason: ContextRemoval['reason'], removed: readonly ContextRemoval[]): ContextRemoval[] {
  return removed.filter((entry) => entry.reason === reason && entry.sequence !== null);
}

/** Options of {@link buildSnapshot}. */
export interface BuildSnapshotOptions {
  /** The final context. */
  segments: readonly ContextSegment[];
  /** The version and boundary known, and the pruning record since the load. */
  state: Pick<ContextEngineState, 'knownVersion' | 'knownSnapshot' | 'loadedBoundary' | 'pruningRecord'>;
  /** Whether messages left empty were removed. */
  emptyMessages: 'remove' | 'keep';
  /** The summary the context is built on, even when trimming dropped it. */
  activeSummary: SummarySegment | null;
  /** The budget of the final context. */
  budget: ContextBudget;
  /**
   * Whether trimmed turns move the boundary: without a summarizer nothing will ever summarize them, so the
   * snapshot's boundary moves past them.
   */
  trimsAdvanceBoundary: boolean;
  /** Stored with the snapshot. */
  policyVersion: string;
  /** The model step the context is built for (null for the initial context). Stored with the snapshot. */
  stepNumber?: number | null;
}

/**
 * What a snapshot of the final context records: the stored part's hash, the sequences included, the boundary
 * (the loaded or last written one, the active summary's, or the last trimmed turn's without a summarizer, whichever
 * is highest: boundaries only advance), the summary in the
 * context and the pruning needed to rebuild it ({@link ContextSnapshotPruning}).
 */
export function buildSnapshot({
  segments,
  state,
  emptyMessages,
  activeSummary,
  budget,
  trimsAdvanceBoundary,
  policyVersion,
  stepNumber = null,
}: BuildSnapshotOptions): NewSnapshot {
  const record = state.pruningRecord;
  const stored = segments.filter((segment) => segment.kind !== 'message' || segment.sequence !== null);
  const messagesHash = hashContextMessages(renderSegments(stored));
  const includedSequences = sequencesOf(stored);
  const included = new Set(includedSequences);
  const trimmedMax = Math.max(0, ...record.trimmedSequences);
  // Never below the newest snapshot known (loaded, or written by an earlier step whose summary this step's
  // trim may have dropped): the store refuses a boundary that goes back, and the tail after it is already right.
  const throughSequence = Math.max(
    state.loadedBoundary,
    state.knownSnapshot?.throughSequence ?? 0,
    activeSummary?.throughSequence ?? 0,
    trimsAdvanceBoundary ? trimmedMax : 0,
  );
  const memory = segments.find((segment) => segment.kind === 'memory');
  const pruned: ContextSnapshotPruning = {
    reasoningSequences: includedSequences.filter((sequence) => record.reasoningSequences.has(sequence)),
    toolCallIds: [...record.toolCallIds]
      .filter((id) => touchesIncluded(record.toolCallSequences.get(id), included))
      .sort(),
    emptyMessages,
    previews: [...record.previews].sort(([a], [b]) => a.localeCompare(b)).map(([, preview]) => preview),
    trimmedSequences: [...record.trimmedSequences]
      .filter((sequence) => sequence > throughSequence)
      .sort((a, b) => a - b),
    memorySequences: memory?.kind === 'memory' ? memory.sequences : [],
    trimmedReasoning: [...record.trimmedReasoning]
      .filter(([sequence]) => includedSequences.includes(sequence))
      .sort(([a], [b]) => a - b)
      .map(([sequence, exceptLast]) => ({ sequence, exceptLast })),
    droppedRounds: [...record.droppedRounds.values()]
      .filter((round) => includedSequences.includes(round.sequence))
      .sort((a, b) => a.sequence - b.sequence || a.key.localeCompare(b.key)),
    ...memoryItemsOf(segments),
  };
  const summaryInContext = segments.find((segment) => segment.kind === 'summary') as SummarySegment | undefined;
  return {
    expectedVersion: state.knownVersion,
    throughSequence,
    summaryId: summaryInContext?.summaryId ?? null,
    includedSequences,
    pruned,
    budget,
    policyVersion,
    messagesHash,
    stepNumber,
  };
}

// The stored messages' sequences, ascending, each once (in the order they come, most often: sorted only when not).
function sequencesOf(segments: readonly ContextSegment[]): number[] {
  const sequences: number[] = [];
  let ascending = true;
  for (const segment of segments) {
    if (segment.kind !== 'message' || segment.sequence === null) continue;
    const last = sequences.length > 0 ? sequences[sequences.length - 1]! : undefined;
    if (last === segment.sequence) continue;
    if (last !== undefined && !(segment.sequence > last)) ascending = false;
    sequences.push(segment.sequence);
  }
  return ascending ? sequences : [...new Set(sequences)].sort((a, b) => a - b);
}

// A call pruned from a message the snapshot leaves out changes nothing when it is rebuilt; one recorded without
// its sequences is kept.
function touchesIncluded(
  sequences: number | null | ReadonlySet<number | null> | undefined,
  included: ReadonlySet<number>,
): boolean {
  if (sequences === undefined) return true;
  if (sequences === null) return false;
  if (typeof sequences === 'number') return included.has(sequences);
  for (const sequence of sequences) if (sequence !== null && included.has(sequence)) return true;
  return false;
}

// The working memory and recalled items in the context, as the snapshot records them (absent when none).
function memoryItemsOf(
  segments: readonly ContextSegment[],
): Pick<ContextSnapshotPruning, 'workingMemory' | 'recalled'> {
  const recalled = segments.flatMap((segment) => (segment.kind === 'recalled' ? [recordedItem(segment.item)] : []));
  const working = segments.find((segment) => segment.kind === 'working-memory');
  return {
    ...(working?.kind === 'working-memory'
      ? { workingMemory: { id: working.workingMemory.id, version: working.workingMemory.version } }
      : {}),
    ...(recalled.length > 0 ? { recalled } : {}),
  };
}
