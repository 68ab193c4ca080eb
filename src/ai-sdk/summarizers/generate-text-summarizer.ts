import { generateText, type LanguageModel } from 'ai';
import type { ContextSummarizer } from '../../context/contracts/context-summarizer.js';
import { buildSummaryPrompt } from '../../context/stages/summary-prompt.js';

/** Options of {@link createGenerateTextSummarizer}. */
export interface CreateGenerateTextSummarizerOptions {
  /** The model that writes summaries (a small, cheap one is usually enough). */
  model: LanguageModel;
  /**
   * The summary's output limit.
   * @default the policy's summary reserve
   */
  maxOutputTokens?: number;
  /**
   * Sampling temperature.
   * @default 0
   */
  temperature?: number;
  /**
   * Retries of a failed call, as `generateText` does them.
   * @default 1
   */
  maxRetries?: number;
}

/**
 * A summarizer that calls `generateText` with the structured prompt of `buildSummaryPrompt` (Goals, Decisions,
 * Facts, Completed actions, Open tasks; previous summary merged, never nested). Errors, aborts and empty texts
 * reach the engine as failures, which write no summary.
 *
 * @example
 * createContextManager({ store, model, summarizer: createGenerateTextSummarizer({ model: openai('gpt-4o-mini') }) });
 */
export function createGenerateTextSummarizer({
  model,
  maxOutputTokens,
  temperature = 0,
  maxRetries = 1,
}: CreateGenerateTextSummarizerOptions): ContextSummarizer {
  return {
    id: typeof model === 'string' ? model : `${model.provider}:${model.modelId}`,
    async summarize(input) {
      const { instructions, prompt } = buildSummaryPrompt(input);
      const result = await generateText({
        model,
        instructions,
        prompt,
        maxOutputTokens: maxOutputTokens ?? input.maxOutputTokens,
        temperature,
        maxRetries,
        abortSignal: input.abortSignal,
        // The application's AI SDK telemetry sees the call, never the conversation it summarizes.
        telemetry: { functionId: 'agent-history.summarize', recordInputs: false, recordOutputs: false },
      });
      return result.text;
    },
  };
}
