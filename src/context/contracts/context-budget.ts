import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { ModelProfile } from '../../tokens/model-profile.js';

/**
 * The budget of one model call, in model-estimated tokens (DESIGN principle 7):
 * `availableTokens = min(contextWindow − maxOutputTokens − safetyMarginTokens, maxInputTokens) −
 * instructionsTokens − toolDefinitionsTokens − currentInputTokens`, and how much of it the history uses. Plain JSON.
 */
export interface ContextBudget {
  /** The model's context window. */
  contextWindow: number;
  /** The output reserve: the `maxOutputTokens` the request asks for. */
  maxOutputTokens: number;
  /** The instructions (system prompt). */
  instructionsTokens: number;
  /** The tool definitions, with framing and preamble. */
  toolDefinitionsTokens: number;
  /** The newest user message (with its attachments), which is never cut. */
  currentInputTokens: number;
  /** The safety margin. */
  safetyMarginTokens: number;
  /** The input budget the caller set (everything sent: instructions, tools, messages), or null. */
  maxInputTokens: number | null;
  /** What is left for the history: summary, memory, pinned messages and earlier turns. */
  availableTokens: number;
  /** What the history in the final context uses. */
  historyTokens: number;
  /** `availableTokens − historyTokens`; negative only when nothing more could be cut. */
  remainingTokens: number;
  /** The profile's tokenizer factor. */
  tokenizerFactor: number;
  /** The calibration factor in force. */
  calibration: number;
}

/** Options of {@link computeContextBudget}. */
export interface ComputeContextBudgetOptions {
  /** The model's profile. */
  profile: ModelProfile;
  /** The output reserve; defaults to the profile's maximum output. */
  maxOutputTokens?: number;
  /** A cap on the whole input (instructions, tools and messages), below what the window leaves. */
  maxInputTokens?: number;
  /** Estimated tokens of the instructions. */
  instructionsTokens: number;
  /** Estimated tokens of the tool definitions. */
  toolDefinitionsTokens: number;
  /** Estimated tokens of the current input. */
  currentInputTokens: number;
  /** Estimated tokens of the history (everything else in the messages). */
  historyTokens?: number;
  /** The calibration factor in force. */
  calibration?: number;
}

/**
 * Computes the breakdown. The margin is `ceil(contextWindow × profile.safetyMarginRatio)`; a `maxInputTokens`
 * below what the window leaves is the ceiling instead (the caller's budget, with no margin taken off it).
 */
export function computeContextBudget({
  profile,
  maxOutputTokens = profile.maxOutputTokens,
  maxInputTokens,
  instructionsTokens,
  toolDefinitionsTokens,
  currentInputTokens,
  historyTokens = 0,
  calibration = 1,
}: ComputeContextBudgetOptions): ContextBudget {
  if (!Number.isSafeInteger(maxOutputTokens) || maxOutputTokens < 1 || maxOutputTokens >= profile.contextWindow) {
    throw new InvalidArgumentError({
      argument: 'maxOutputTokens',
      value: maxOutputTokens,
      message: `expected an integer from 1 to below the context window (${profile.contextWindow}).`,
    });
  }
  if (maxInputTokens !== undefined) assertMaxInputTokens(maxInputTokens);
  const safetyMarginTokens = Math.ceil(profile.contextWindow * profile.safetyMarginRatio);
  const windowCeiling = profile.contextWindow - maxOutputTokens - safetyMarginTokens;
  const inputCeiling = maxInputTokens === undefined ? windowCeiling : Math.min(windowCeiling, maxInputTokens);
  const availableTokens = inputCeiling - instructionsTokens - toolDefinitionsTokens - currentInputTokens;
  return {
    contextWindow: profile.contextWindow,
    maxOutputTokens,
    instructionsTokens,
    toolDefinitionsTokens,
    currentInputTokens,
    safetyMarginTokens,
    maxInputTokens: maxInputTokens ?? null,
    availableTokens,
    historyTokens,
    remainingTokens: availableTokens - historyTokens,
    tokenizerFactor: profile.tokenizerFactor,
    calibration,
  };
}

/** Throws `InvalidArgumentError` unless `value` is a positive safe integer: a budget of input tokens. */
export function assertMaxInputTokens(value: unknown): asserts value is number {
  if (!(Number.isSafeInteger(value) && (value as number) > 0)) {
    throw new InvalidArgumentError({
      argument: 'maxInputTokens',
      value,
      message: 'expected a positive integer: the most tokens a model call may be sent.',
    });
  }
}
