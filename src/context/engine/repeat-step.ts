import type { ModelMessage } from 'ai';
import { sameMessage } from '../segments/context-message-ref.js';
import type { ContextEngineState } from './context-engine-state.js';
import type { ContextReport } from './context-report.js';

/** The step as the engine's `prepareStep` gets it. */
export interface RepeatStepInput {
  /** The engine's state. */
  state: ContextEngineState;
  /** The step's messages (after `adoptThread` when the engine loaded the thread for it). */
  input: readonly ModelMessage[];
  /** The messages the caller passed. */
  messages: readonly ModelMessage[];
  /** The step number. */
  stepNumber: number;
  /** The provider's usage of the last step, if any. */
  lastStepInputTokens: number | undefined;
  /** When the call started, and the engine's clock. */
  started: number;
  now: () => number;
}

/**
 * The step's result without compacting it, when `input` is the very messages the newest compaction returned (the
 * same objects, in order: step 0 of a request gets what `initialMessages()` returned) and the call would be budgeted
 * as it was (the same calibration factor, instructions estimated to the same size, no usage to learn from):
 * compacting them again gives them back unchanged (a context the engine returned fits its budget and holds nothing
 * more to prune). The report repeats that compaction's budget, with `changed: false`, no stages and no snapshot
 * written. Undefined when the step must be compacted.
 */
export function repeatStep(
  { state, input, messages, stepNumber, lastStepInputTokens, started, now }: RepeatStepInput,
  budgeted: { calibration: number; instructionsTokens: () => number },
): { messages: ModelMessage[] | undefined; report: ContextReport } | undefined {
  const last = state.lastCompaction;
  if (!last || lastStepInputTokens !== undefined || budgeted.calibration !== last.calibration) return undefined;
  if (last.messages.length !== input.length) return undefined;
  for (let index = 0; index < input.length; index++) if (input[index] !== last.messages[index]) return undefined;
  if (budgeted.instructionsTokens() !== last.instructionsTokens) return undefined;
  const report: ContextReport = {
    ...last.report,
    trigger: 'prepare-step',
    stepNumber,
    changed: false,
    stages: [],
    snapshot: { status: 'not-needed', version: state.knownVersion || null, throughSequence: null, messagesHash: null },
    durationMs: now() - started,
  };
  // The engine loaded the thread for this step: the caller's messages are replaced unless equal to it.
  const replaced = input !== messages && differs(input, messages);
  return { messages: replaced && input.length > 0 ? [...input] : undefined, report };
}

/** Whether the messages differ from `input`, by value (a copy of what the engine returned is unchanged). */
export function differs(output: readonly ModelMessage[], input: readonly ModelMessage[]): boolean {
  return output.length !== input.length || output.some((message, index) => !sameMessage(message, input[index]!));
}
