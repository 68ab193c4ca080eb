import type { ModelMessage } from 'ai';
import { sameMessage } from '../segments/context-message-ref.js';
import { createContextMeasure } from '../../tokens/context-measure.js';
import { estimateSegments, type ContextSegment } from '../segments/context-segment.js';
import type { CompactContextOptions } from './compact-context-options.js';
import { recordReturnedContext, type ContextEngineState, type ReturnedCompaction } from './context-engine-state.js';
import { estimatePromptOverhead } from './estimate-prompt-overhead.js';
import type { ContextReport } from '../contracts/context-report.js';
import { snapshotNotNeeded } from './write-context-snapshot.js';

/**
 * The newest compaction, when `messages` are the very messages it returned (the same objects, in order: step 0 of a
 * request gets what `initialMessages()` returned) and the call would be budgeted as it was (the same calibration,
 * instructions of the same size, calibrated and not, no usage to learn from): compacting them again gives them back
 * unchanged (a context the engine returned fits its budget and holds nothing more to prune), and leaves the same
 * estimate for the calibrator, so the engine does not. `instructionsTokens(calibration)` estimates the call's.
 */
export function repeatedCompaction(
  state: ContextEngineState,
  messages: readonly ModelMessage[],
  call: { lastStepInputTokens: number | undefined; calibration: number },
  instructionsTokens: (calibration: number) => number,
): ContextEngineState['lastCompaction'] {
  const last = state.lastCompaction;
  if (!last || call.lastStepInputTokens !== undefined || call.calibration !== last.calibration) return undefined;
  if (last.messages.length !== messages.length) return undefined;
  for (let index = 0; index < messages.length; index++) if (messages[index] !== last.messages[index]) return undefined;
  if (instructionsTokens(call.calibration) !== last.instructionsTokens) return undefined;
  // Below 1 (or above), two sizes may round to one calibrated: the uncalibrated one is the calibrator's.
  if (call.calibration !== 1 && instructionsTokens(1) !== last.uncalibratedInstructionsTokens) return undefined;
  return last;
}

/**
 * The report of a step {@link repeatedCompaction} found repeated: what the full compaction of the same messages
 * reports, but for its stages (none ran): nothing changed, no snapshot needed, and no usage observed (the step had
 * none; the last compaction's observation is not this step's).
 */
export function repeatedReport(
  state: Pick<ContextEngineState, 'knownVersion'>,
  repeated: ReturnedCompaction,
  stepNumber: number,
  durationMs: number,
): ContextReport {
  return {
    ...repeated.report,
    // Each report's own, as each compaction's is (an onReport may change it).
    budget: { ...repeated.report.budget },
    trigger: 'prepare-step',
    stepNumber,
    changed: false,
    stages: [],
    snapshot: snapshotNotNeeded(state),
    calibration: { factor: repeated.calibration, observedInputTokens: null, estimatedInputTokens: null },
    durationMs,
  };
}

/**
 * Records the returned context with its uncalibrated estimate (the calibrator compares it with the next usage) and
 * the compaction, with what a step given the same messages must match to be that compaction again
 * ({@link repeatedCompaction}).
 */
export function recordReturned(
  options: CompactContextOptions,
  returned: { segments: ContextSegment[]; messages: ModelMessage[]; instructionsTokens: number; report: ContextReport },
): void {
  const { calibration } = options;
  const { segments, messages, instructionsTokens, report } = returned;
  // Uncalibrated, it is the budget's own sum (a factor of 1 changes nothing).
  const uncalibrated =
    calibration === 1 ? { total: report.estimatedTokens, instructionsTokens } : uncalibratedEstimate(options, segments);
  recordReturnedContext(options.state, {
    segments,
    estimate: uncalibrated.total,
    compaction: {
      messages,
      instructionsTokens,
      uncalibratedInstructionsTokens: uncalibrated.instructionsTokens,
      calibration,
      report,
    },
  });
}

// Without calibration: the calibrator compares this with the provider's usage to learn the factor.
function uncalibratedEstimate(
  { settings, state, tokenCounter, toolDefinitions, instructions }: CompactContextOptions,
  segments: readonly ContextSegment[],
): { total: number; instructionsTokens: number } {
  const overhead = estimatePromptOverhead({
    instructions,
    toolDefinitions,
    tokenCounter,
    profile: settings.profile,
    instructionTokenCache: state.instructionTokenCache,
  });
  const baseMeasure = createContextMeasure({ tokenCounter, profile: settings.profile });
  const total = overhead.instructionsTokens + overhead.toolDefinitionsTokens + estimateSegments(segments, baseMeasure);
  return { total, instructionsTokens: overhead.instructionsTokens };
}

/** Whether the messages differ from `input`, by value (a copy of what the engine returned is unchanged). */
export function differs(output: readonly ModelMessage[], input: readonly ModelMessage[]): boolean {
  return output.length !== input.length || output.some((message, index) => !sameMessage(message, input[index]!));
}
