import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { ModelProfile } from '../../tokens/model-profile.js';

/**
 * The budget of one model call, in model-estimated tokens (DESIGN principle 7):
 * `availableTokens = contextWindow − maxOutputTokens − instructionsTokens − toolDefinitionsTokens −
 * currentInputTokens − safetyMarginTokens`, and how much of it the history uses. Plain JSON.
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

/** Computes the breakdown. The margin is `ceil(contextWindow × profile.safetyMarginRatio)`. */
export function computeContextBudget({
  profile,
  maxOutputTokens = profile.maxOutputTokens,
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
  const safetyMarginTokens = Math.ceil(profile.contextWindow * profile.safetyMarginRatio);
  const availableTokens =
    profile.contextWindow -
    maxOutputTokens -
    instructionsTokens -
    toolDefinitionsTokens -
    currentInputTokens -
    safetyMarginTokens;
  return {
    contextWindow: profile.contextWindow,
    maxOutputTokens,
    instructionsTokens,
    toolDefinitionsTokens,
    currentInputTokens,
    safetyMarginTokens,
    availableTokens,
    historyTokens,
    remainingTokens: availableTokens - historyTokens,
    tokenizerFactor: profile.tokenizerFactor,
    calibration,
  };
}
