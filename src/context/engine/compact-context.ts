import { createContextMeasure, type ContextMeasure } from '../../tokens/context-measure.js';
import {
  estimateSegments,
  findCurrentInputIndex,
  renderSegments,
  type ContextSegment,
} from '../segments/context-segment.js';
import { markSegments } from '../segments/context-message-ref.js';
import { computeContextBudget, type ContextBudget } from '../contracts/context-budget.js';
import type { CompactContextOptions, ContextEngineSettings } from './compact-context-options.js';
import { recordCompaction } from './context-engine-state.js';
import type { ContextReport, ContextSnapshotReport, ContextStageReport } from '../contracts/context-report.js';
import { buildSnapshot, decideSnapshot } from './decide-snapshot.js';
import { estimatePromptOverhead, type PromptOverheadTokens } from './estimate-prompt-overhead.js';
import { listStageReports, runContextStages, type ContextStagesResult } from './run-context-stages.js';
import { snapshotNotNeeded, writeContextSnapshot } from './write-context-snapshot.js';
import { recordReturned } from './repeated-compaction.js';
import { windowHeld } from './context-window.js';
import { holdsPreview } from '../stages/preview-message-content.js';
import { loadMemorySegments } from '../stages/load-memory-segments.js';

/**
 * One compaction: budgets the call, runs the stages ({@link runContextStages}), writes a snapshot when
 * {@link decideSnapshot} says so, and reports. Records the returned context in the state for the next step.
 */
export async function compactContext(
  options: CompactContextOptions,
): Promise<{ segments: ContextSegment[]; report: ContextReport }> {
  const { settings, state, tokenCounter, toolDefinitions, calibration } = options;
  const { store, profile, policy, summarizer } = settings;
  const measure = createContextMeasure({ tokenCounter, profile, calibration });
  const overhead = estimatePromptOverhead({
    instructions: options.instructions,
    toolDefinitions,
    tokenCounter,
    profile,
    calibration,
    instructionTokenCache: state.instructionTokenCache,
  });
  const budgetFor = (segments: readonly ContextSegment[]) =>
    measureBudget({ segments, measure, overhead, settings, calibration });
  const initialBudget = budgetFor(options.segments);
  const messageBudget = initialBudget.availableTokens + initialBudget.currentInputTokens;
  // Once per request, before the window: a window that does not hold runs the stages again with the same memory.
  const memoryItems = options.memory
    ? await loadMemorySegments({ store, segments: options.segments, measure, policy })
    : null;
  const { stages, loadStages } = await runOnWindow(options, (segments, outside) =>
    runContextStages({
      segments,
      // A window holds no summarizer's turns (a thread with a summarizer is loaded whole).
      ...(segments === options.segments && options.original ? { original: options.original } : {}),
      ...outside,
      measure,
      messageBudget,
      policy,
      summarizer,
      store,
      contentVersions: state.contentVersions,
      memory: options.memory,
      memoryItems,
    }),
  );
  // Marked for the next step's parse; the stages and the snapshot hash never see the references.
  const final = markSegments(stages.segments, state.markedCopies, holdsPreview);
  const decision = decideSnapshot({ loadedThread: state.loadedThread, stages });
  recordCompaction(state, { ...stages, trimmedSequences: decision.trimmedSequences });
  const budget = budgetFor(final);
  const snapshot = await snapshotOf(options, stages, decision, budget);
  const messages = renderSegments(final);
  const estimatedTokens =
    budget.instructionsTokens + budget.toolDefinitionsTokens + budget.currentInputTokens + budget.historyTokens;
  const report: ContextReport = {
    trigger: options.trigger,
    stepNumber: options.stepNumber,
    changed: true,
    messageCount: messages.length,
    estimatedTokens,
    budget,
    stages: [...loadStages, ...listStageReports(stages.reports)],
    snapshot,
    calibration: { factor: calibration, ...options.observation },
    durationMs: settings.now() - options.started,
  };
  recordReturned(options, { segments: final, messages, instructionsTokens: overhead.instructionsTokens, report });
  return { segments: final, report };
}

// The snapshot written when the decision says so (else what is known of the newest one).
async function snapshotOf(
  { settings, state, stepNumber }: CompactContextOptions,
  stages: ContextStagesResult,
  decision: ReturnType<typeof decideSnapshot>,
  budget: ContextBudget,
): Promise<ContextSnapshotReport> {
  if (!decision.write) return snapshotNotNeeded(state);
  const { store, policy, summarizer } = settings;
  return writeContextSnapshot({
    store,
    state,
    snapshot: buildSnapshot({
      // The messages before marking: the same objects at every load of a cached thread, so what is kept per
      // message object for the hash (its canonical form, the state after a prefix) is found again.
      segments: stages.segments,
      state,
      emptyMessages: stages.pruning.emptyMessages,
      activeSummary: stages.activeSummary,
      budget,
      trimsAdvanceBoundary: !summarizer,
      policyVersion: policy.version,
      stepNumber,
    }),
    snapshotConflicts: policy.snapshotConflicts,
  });
}

// The stages over the window; over the whole thread instead when the window did not hold.
async function runOnWindow(
  { segments, stages: loadStages, window, settings }: CompactContextOptions,
  run: (
    segments: ContextSegment[],
    outside: { outsideTokens: number; outsideTokensAtMost: number },
  ) => Promise<ContextStagesResult>,
): Promise<{ stages: ContextStagesResult; loadStages: ContextStageReport[] }> {
  const none = { outsideTokens: 0, outsideTokensAtMost: 0 };
  const { outsideTokens, outsideTokensAtMost } = window ?? none;
  const stages = await run(segments, { outsideTokens, outsideTokensAtMost });
  if (!window) return { stages, loadStages };
  const { firstSequence } = window;
  if (windowHeld({ ...stages, segments, firstSequence, policy: settings.policy })) return { stages, loadStages };
  const whole = window.whole();
  return { stages: await run(whole.segments, none), loadStages: whole.stages };
}

function measureBudget({
  segments,
  measure,
  overhead,
  settings,
  calibration,
}: {
  segments: readonly ContextSegment[];
  measure: ContextMeasure;
  overhead: PromptOverheadTokens;
  settings: ContextEngineSettings;
  calibration: number;
}): ContextBudget {
  const currentIndex = findCurrentInputIndex(segments);
  const currentInputTokens = currentIndex >= 0 ? measure.estimate(segments[currentIndex]!.tokens) : 0;
  return computeContextBudget({
    profile: settings.profile,
    maxOutputTokens: settings.maxOutputTokens,
    maxInputTokens: settings.maxInputTokens,
    instructionsTokens: overhead.instructionsTokens,
    toolDefinitionsTokens: overhead.toolDefinitionsTokens,
    currentInputTokens,
    historyTokens: estimateSegments(segments, measure) - currentInputTokens,
    calibration,
  });
}
