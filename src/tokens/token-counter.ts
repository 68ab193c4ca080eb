import { guardLongRuns } from './guard-long-runs.js';

/**
 * Counts the tokens of a text. `id` names the tokenizer, so that counts stored with a message can be
 * recognised later (a different id means the stored count is recounted).
 */
export interface TokenCounter {
  /** A stable name of the tokenizer, for example `o200k_base/gpt-tokenizer@4`. */
  readonly id: string;
  /** The number of tokens in `text`. Must be synchronous and deterministic. */
  count(text: string): number;
}

/** The id of the default counter returned by {@link loadO200kTokenCounter}. */
export const o200kTokenCounterId = 'o200k_base/gpt-tokenizer@4';

const CACHE_MINIMUM_LENGTH = 1024;
const CACHE_MAXIMUM_ENTRIES = 256;
const CACHE_MAXIMUM_CHARACTERS = 16_000_000;

let o200kCounter: Promise<TokenCounter> | undefined;

/**
 * The default counter: exact o200k (GPT-4o, GPT-4.1, GPT-5, o-series; the base count for every other model
 * family) from `gpt-tokenizer`, with special-token strings such as `<|endoftext|>` counted as text and the
 * {@link guardLongRuns} guard. The tokenizer (about 1 MB) is imported on the first call and shared by every
 * later call. Counts of long texts are cached (bounded), so a large tool result is tokenized once.
 *
 * @example
 * const counter = await loadO200kTokenCounter();
 * counter.count('Hello, world'); // 4
 */
export function loadO200kTokenCounter(): Promise<TokenCounter> {
  o200kCounter ??= import('gpt-tokenizer/encoding/o200k_base').then(({ countTokens }) => {
    const options = { disallowedSpecial: new Set<string>() };
    const guarded = guardLongRuns((text) => countTokens(text, options));
    const cache = new Map<string, number>();
    let cachedCharacters = 0;
    return {
      id: o200kTokenCounterId,
      count(text: string): number {
        if (text.length === 0) return 0;
        if (text.length < CACHE_MINIMUM_LENGTH) return guarded(text);
        const cached = cache.get(text);
        if (cached !== undefined) return cached;
        const tokens = guarded(text);
        cache.set(text, tokens);
        cachedCharacters += text.length;
        while (cache.size > CACHE_MAXIMUM_ENTRIES || cachedCharacters > CACHE_MAXIMUM_CHARACTERS) {
          const oldest = cache.keys().next().value as string;
          cache.delete(oldest);
          cachedCharacters -= oldest.length;
        }
        return tokens;
      },
    };
  });
  return o200kCounter;
}
