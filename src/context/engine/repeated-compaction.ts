import type { ModelMessage } from 'ai';
import type { ContextEngineState, ReturnedCompaction } from './context-engine-state.js';
import type { ContextReport } from './context-report.js';
import { snapshotNotNeeded } from './write-context-snapshot.js';

/**
 * The newest compaction, when `messages` are the very messages it returned (the same objects, in order: step 0 of a
 * request gets what `initialMessages()` returned) and the call would be budgeted as it was (the same calibration,
 * instructions of the same size, no usage to learn from): compacting them again gives them back unchanged (a
 * context the engine returned fits its budget and holds nothing more to prune), so the engine does not.
 */
export function repeatedCompaction(
  state: ContextEngineState,
  messages: readonly ModelMessage[],
  call: { lastStepInputTokens: number | undefined; calibration: number },
  instructionsTokens: () => number,
): ContextEngineState['lastCompaction'] {
  const last = state.lastCompaction;
  if (!last || call.lastStepInputTokens !== undefined || call.calibration !== last.calibration) return undefined;
  if (last.messages.length !== messages.length) return undefined;
  for (let index = 0; index < messages.length; index++) if (messages[index] !== last.messages[index]) return undefined;
  return instructionsTokens() === last.instructionsTokens ? last : undefined;
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
    trigger: 'prepare-step',
    stepNumber,
    changed: false,
    stages: [],
    snapshot: snapshotNotNeeded(state),
    calibration: { factor: repeated.calibration, observedInputTokens: null, estimatedInputTokens: null },
    durationMs,
  };
}
