import { estimateTokens } from '../../tokens/context-measure.js';
import type { ModelProfile } from '../../tokens/model-profile.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { estimateToolDefinitionTokens } from '../../tokens/tool-definition-tokens.js';

/** Instructions as the AI SDK takes them: a string, a system message, or several. */
export type ContextInstructions = string | { content: string } | ReadonlyArray<{ content: string }> | undefined;

/** The raw size of the tools the model is offered, counted once per engine. */
export interface ToolDefinitionsCount {
  /** Raw tokens of every definition (`countToolDefinitionTokens`). */
  rawTokens: number;
  /** How many tools there are. */
  toolCount: number;
}

/** What a prompt costs besides its messages, in model-estimated tokens. */
export interface PromptOverheadTokens {
  /** The instructions (system prompt). */
  instructionsTokens: number;
  /** The tool definitions, with framing and preamble. */
  toolDefinitionsTokens: number;
}

/** Options of {@link estimatePromptOverhead}. */
export interface EstimatePromptOverheadOptions {
  /** The instructions of the call. */
  instructions: ContextInstructions;
  /** The tools, counted once. */
  toolDefinitions: ToolDefinitionsCount;
  /** Counts instruction texts. */
  tokenCounter: TokenCounter;
  /** Scales raw counts to the model's tokens. */
  profile: ModelProfile;
  /**
   * The calibration factor in force.
   * @default 1
   */
  calibration?: number;
  /** Raw counts of instruction texts already seen (the same instructions come back on every step). */
  instructionTokenCache: Map<string, number>;
}

/** Estimates the instructions and the tool definitions of one call: the part of the budget that is not messages. */
export function estimatePromptOverhead({
  instructions,
  toolDefinitions,
  tokenCounter,
  profile,
  calibration = 1,
  instructionTokenCache,
}: EstimatePromptOverheadOptions): PromptOverheadTokens {
  return {
    instructionsTokens: estimateInstructionsTokens({
      instructions,
      tokenCounter,
      profile,
      calibration,
      instructionTokenCache,
    }),
    toolDefinitionsTokens: estimateToolDefinitionTokens({
      rawTokens: toolDefinitions.rawTokens,
      toolCount: toolDefinitions.toolCount,
      profile,
      calibration,
    }),
  };
}

/** Options of {@link estimateInstructionsTokens}. */
export type EstimateInstructionsTokensOptions = Omit<EstimatePromptOverheadOptions, 'toolDefinitions'>;

/** Estimates instructions as system messages: their texts' raw tokens, scaled, plus per-message framing. */
export function estimateInstructionsTokens({
  instructions,
  tokenCounter,
  profile,
  calibration = 1,
  instructionTokenCache,
}: EstimateInstructionsTokensOptions): number {
  if (instructions === undefined) return 0;
  const list =
    typeof instructions === 'string'
      ? [instructions]
      : 'content' in instructions
        ? [instructions.content]
        : [...instructions].map((message) => message.content);
  let text = 0;
  for (const item of list) {
    let tokens = instructionTokenCache.get(item);
    if (tokens === undefined) {
      tokens = tokenCounter.count(item);
      // Bounded: a caller that varies its instructions per call must not grow the cache without end.
      if (instructionTokenCache.size > 32) instructionTokenCache.clear();
      instructionTokenCache.set(item, tokens);
    }
    text += tokens;
  }
  return estimateTokens({ text, images: 0, files: 0, messages: list.length }, profile, calibration);
}
