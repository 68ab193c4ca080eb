import type { ModelMessage } from 'ai';
import type { ContextSegment } from '../segments/context-segment.js';
import type { ContextPruning } from '../stages/apply-context-pruning.js';
import type { ToolOutputPreview } from '../contracts/tool-output-preview.js';
import { callKey } from '../stages/apply-tool-output-previews.js';
import type { DroppedRound, TrimmedReasoning } from '../stages/shrink-newest-turn.js';
import type { ContextSnapshot, ContextStore, LoadedContext } from '../../model/context-store.js';
import type { ContextReport } from '../contracts/context-report.js';
import type { ToolDefinitionsCount } from './estimate-prompt-overhead.js';
import { registerSegments, type ProvenanceRegistry } from './parse-context-messages.js';
import { createMarkedCopies, type MarkedCopies } from '../segments/context-message-ref.js';

/**
 * Everything the engine compacted in the stored part of the context since it loaded the thread. Each step
 * prunes the messages the previous one returned, so a snapshot must record the union, not the last step alone.
 */
export interface ContextPruningRecord {
  /** Stored sequences whose reasoning was removed. */
  reasoningSequences: Set<number>;
  /** Tool calls whose traffic was removed. */
  toolCallIds: Set<string>;
  /**
   * The stored sequences each tool call's traffic was removed from: a snapshot records only the calls of the
   * messages it includes (those of messages left out change nothing when it is rebuilt). One sequence (most calls
   * are in one segment) is held as it is, more as a set.
   */
  toolCallSequences: Map<string, number | null | Set<number | null>>;
  /** Tool outputs and inputs replaced by previews, by `output:`/`input:` and call id (the latest one wins). */
  previews: Map<string, ToolOutputPreview>;
  /** Stored sequences trimmed away. */
  trimmedSequences: Set<number>;
  /** Stored sequences whose reasoning a trim removed → whether their last assistant message kept its own. */
  trimmedReasoning: Map<number, boolean>;
  /** Stored rounds a trim dropped, by sequence and round key. */
  droppedRounds: Map<string, DroppedRound>;
}

/**
 * The state a context engine keeps between `buildInitialContext` and the steps of a request. Everything else
 * the engine computes is derived from the messages of the call. What it knows of the thread (snapshot,
 * boundary, pruning record, returned messages, last estimate) changes only through the `record…` functions of
 * this module; the caches fill where they are read, and `lastReport` is set when a report is emitted.
 */
export interface ContextEngineState {
  /** Whether this engine loaded the thread: only then does it know the version and boundary to write a snapshot. */
  loadedThread: boolean;
  /** The snapshot version a new snapshot must expect. */
  knownVersion: number;
  /** The newest snapshot known (loaded or written), to recognise an unchanged context by its hash. */
  knownSnapshot: ContextSnapshot | null;
  /** The boundary of the snapshot that was loaded (0 without one). */
  loadedBoundary: number;
  /** What was compacted since the thread was loaded. */
  pruningRecord: ContextPruningRecord;
  /** The uncalibrated estimate of the last prompt built, compared with the usage the provider reports. */
  lastEstimate: number | undefined;
  /** The newest report. */
  lastReport: ContextReport | undefined;
  /**
   * The newest compaction's messages as returned, with what it depended on besides them (the instructions' size,
   * the calibration factor) and its report: a step given exactly these is that compaction again.
   */
  lastCompaction: ReturnedCompaction | undefined;
  /**
   * The messages this engine returned, to parse the next step's messages back into segments: read it with
   * {@link provenanceOf}, which registers the segments returned since it was last read (a request that ends after
   * its first step never needs them).
   */
  provenance: ProvenanceRegistry;
  /** The segments returned since the registry was last read, oldest first. */
  unregistered: Array<readonly ContextSegment[]>;
  /**
   * The marked copies of the messages this engine returned, per message object (`markSegments`); made afresh at each
   * load of the thread, as the messages are without a cache. Listed, and put in a map (not a weak one: a few hundred
   * weak entries per request cost the collector more) only when a later compaction of the load looks them up.
   */
  markedCopies: MarkedCopies;
  /** Raw token counts of instruction texts already seen. */
  instructionTokenCache: Map<string, number>;
  /** The tools' raw size, counted on first use. */
  toolDefinitions: ToolDefinitionsCount | undefined;
  /** The content version of each loaded message (when the store gives it): handed back with a summary of it. */
  contentVersions: Map<number, number>;
}

/** The newest compaction's result and what it depended on besides its messages. */
export interface ReturnedCompaction {
  /** The messages returned, in order. */
  messages: readonly ModelMessage[];
  /** The instructions' estimated tokens it was budgeted with. */
  instructionsTokens: number;
  /** The same without calibration (in the estimate the calibrator compares with the next step's usage). */
  uncalibratedInstructionsTokens: number;
  /** The calibration factor in force. */
  calibration: number;
  /** Its report. */
  report: ContextReport;
}

/** The state of an engine that has done nothing yet. */
export function createContextEngineState(): ContextEngineState {
  return {
    loadedThread: false,
    knownVersion: 0,
    knownSnapshot: null,
    loadedBoundary: 0,
    pruningRecord: {
      reasoningSequences: new Set(),
      toolCallIds: new Set(),
      toolCallSequences: new Map(),
      previews: new Map(),
      trimmedSequences: new Set(),
      trimmedReasoning: new Map(),
      droppedRounds: new Map(),
    },
    lastEstimate: undefined,
    lastReport: undefined,
    lastCompaction: undefined,
    provenance: new Map(),
    unregistered: [],
    markedCopies: createMarkedCopies(),
    instructionTokenCache: new Map(),
    toolDefinitions: undefined,
    contentVersions: new Map(),
  };
}

/** Records a load of the thread: its version and snapshot, its messages' content versions, and a pruning record started afresh. */
export function recordLoadedContext(state: ContextEngineState, view: LoadedContext): void {
  state.loadedThread = true;
  state.knownVersion = view.currentVersion;
  state.knownSnapshot = view.snapshot;
  state.loadedBoundary = view.snapshot?.throughSequence ?? 0;
  state.contentVersions.clear();
  // A cached message is the same object at every load: the caller's copy of it from an earlier load is not reused.
  state.markedCopies = createMarkedCopies();
  for (const message of [...view.pinned, ...view.tail])
    if (message.contentVersion !== undefined) state.contentVersions.set(message.sequence, message.contentVersion);
  forgetCompactions(state);
}

/** Empties the pruning record: nothing is compacted yet in the context the engine starts again from. */
export function forgetCompactions(state: ContextEngineState): void {
  state.pruningRecord.reasoningSequences.clear();
  state.pruningRecord.toolCallIds.clear();
  state.pruningRecord.toolCallSequences.clear();
  state.pruningRecord.previews.clear();
  state.pruningRecord.trimmedSequences.clear();
  state.pruningRecord.trimmedReasoning.clear();
  state.pruningRecord.droppedRounds.clear();
}

/** What one compaction removed from the stored part of the context, added to the pruning record. */
export interface ContextCompaction {
  /** The prune stage's decision. */
  pruning: Pick<ContextPruning, 'reasoningSequences' | 'toolCallIds'> &
    Partial<Pick<ContextPruning, 'toolCallSequences'>>;
  /** The previews made. */
  previews: readonly ToolOutputPreview[];
  /** Stored sequences trimmed away. */
  trimmedSequences: readonly number[];
  /** Stored messages whose reasoning a trim removed. */
  trimmedReasoning?: readonly TrimmedReasoning[];
  /** Stored rounds a trim dropped. */
  droppedRounds?: readonly DroppedRound[];
}

/** Adds one compaction to the pruning record. */
export function recordCompaction(state: ContextEngineState, compaction: ContextCompaction): void {
  const record = state.pruningRecord;
  for (const sequence of compaction.pruning.reasoningSequences) record.reasoningSequences.add(sequence);
  for (const id of compaction.pruning.toolCallIds) record.toolCallIds.add(id);
  const toolCallSequences = compaction.pruning.toolCallSequences ?? [];
  for (let index = 0; index < toolCallSequences.length; index++) {
    const [id, sequence] = toolCallSequences[index]!;
    const held = record.toolCallSequences.get(id);
    if (held instanceof Set) held.add(sequence);
    else if (!record.toolCallSequences.has(id)) record.toolCallSequences.set(id, sequence);
    else if (held !== sequence) record.toolCallSequences.set(id, new Set([held as number | null, sequence]));
  }
  for (const preview of compaction.previews)
    record.previews.set(`${preview.part ?? 'output'}:${callKey(preview)}`, preview);
  for (const sequence of compaction.trimmedSequences) record.trimmedSequences.add(sequence);
  // Removing all reasoning of a message (false) wins over keeping that of its last assistant message (true).
  for (const { sequence, exceptLast } of compaction.trimmedReasoning ?? [])
    record.trimmedReasoning.set(sequence, (record.trimmedReasoning.get(sequence) ?? true) && exceptLast);
  for (const round of compaction.droppedRounds ?? []) record.droppedRounds.set(`${round.sequence}:${round.key}`, round);
}

/** Records a snapshot this engine wrote: the next one expects its version. */
export function recordWrittenSnapshot(state: ContextEngineState, written: ContextSnapshot): void {
  state.knownVersion = written.version;
  state.knownSnapshot = written;
}

/**
 * Records the context returned: its messages for the next step's parse, its uncalibrated estimate, and the
 * compaction that made it.
 */
export function recordReturnedContext(
  state: ContextEngineState,
  {
    segments,
    estimate,
    compaction,
  }: { segments: readonly ContextSegment[]; estimate: number; compaction: ReturnedCompaction },
): void {
  state.unregistered.push(segments);
  state.lastEstimate = estimate;
  state.lastCompaction = compaction;
}

/** The registry of the messages this engine returned, with every segment returned so far registered in order. */
export function provenanceOf(state: ContextEngineState): ProvenanceRegistry {
  for (const segments of state.unregistered) registerSegments(state.provenance, segments);
  state.unregistered.length = 0;
  return state.provenance;
}

/**
 * A `writeSummary` that passes, as `sourceVersions`, the content versions the engine loaded for the covered
 * messages (unless the caller gave them): a summary made from messages redacted while the summarizer ran is then
 * refused by the store. It calls the store's own method, so a store that is a class instance keeps its `this`.
 */
export function withSourceVersions(
  store: Pick<ContextStore, 'writeSummary'>,
  contentVersions: ReadonlyMap<number, number>,
): Pick<ContextStore, 'writeSummary'> {
  return {
    writeSummary: (input) =>
      store.writeSummary({
        ...input,
        sourceVersions:
          input.sourceVersions ??
          [...contentVersions]
            .filter(([sequence]) => sequence >= input.fromSequence && sequence <= input.throughSequence)
            .map(([sequence, contentVersion]) => ({ sequence, contentVersion })),
      }),
  };
}
