import type { LanguageModelUsage } from 'ai';
import type { RunUsage } from '../../model/stored-rows.js';

/** Token usage as stored in an assistant message's `metadata.usage`: the AI SDK's numbers, without `raw`. */
export interface MessageUsage {
  /** Tokens the model read (the AI SDK's `inputTokens`). */
  inputTokens?: number;
  /** Tokens the model wrote. */
  outputTokens?: number;
  /** Input and output tokens together. */
  totalTokens?: number;
  /** Of the output tokens, those spent reasoning. */
  reasoningTokens?: number;
  /** Of the input tokens, those read from the provider's cache. */
  cachedInputTokens?: number;
}

/** Adds two usages (per-step usages add up to the turn's); an unknown count stays unknown only if both are. */
export function addUsage(a: MessageUsage, b: MessageUsage): MessageUsage {
  const sum: MessageUsage = {};
  for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'reasoningTokens', 'cachedInputTokens'] as const) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return sum;
}

/** The JSON-safe subset of the AI SDK's `LanguageModelUsage` (undefined counts and `raw` left out). */
export function toMessageUsage(usage: LanguageModelUsage | undefined): MessageUsage {
  if (!usage) return {};
  const result: MessageUsage = {};
  const set = (key: keyof MessageUsage, value: number | undefined) => {
    if (typeof value === 'number' && Number.isFinite(value)) result[key] = value;
  };
  set('inputTokens', usage.inputTokens);
  set('outputTokens', usage.outputTokens);
  set('totalTokens', usage.totalTokens);
  set('reasoningTokens', usage.outputTokenDetails?.reasoningTokens);
  set('cachedInputTokens', usage.inputTokenDetails?.cacheReadTokens);
  return result;
}

/** The run's usage columns from a {@link MessageUsage}. */
export function toRunUsage(usage: MessageUsage): RunUsage {
  const { totalTokens: _totalTokens, ...run } = usage;
  return run;
}
