import { guardLongRuns } from './guard-long-runs.js';

/**
 * Counts the tokens of a text. `id` names the tokenizer, so that counts stored with a message can be
 * recognised later (a different id means the stored count is recounted).
 */
export interface TokenCounter {
  /**
   * A stable name of the tokenizer, for example `o200k_base/gpt-tokenizer@4`. Counters of one id must count alike:
   * stored counts are matched by it, and what the engine derives by counting is remembered by it.
   */
  readonly id: string;
  /** The number of tokens in `text`. Must be synchronous and deterministic. */
  count(text: string): number;
  /**
   * A view of this counter whose cached counts are kept apart from every other scope's, so that one scope (a
   * tenant) cannot time whether another one counted a text. The store counts through `scoped(tenantId)`.
   */
  scoped?(scope: string): TokenCounter;
}

/**
 * The memo of `memos` for a counter, by its id: what a tokenizer makes of an object (a part's count, a preview cut
 * by counting) is the same for every counter of that id, and the engine of each request gets a counter object of
 * its own (`scopeTokenCounter`), so a memo by counter object would never be found again by the next request. The
 * objects remembered are the thread's own (a store's cache keeps them per tenant and thread), so no scope sees
 * another's.
 */
export function memoOfCounter<KEY extends object, VALUE>(
  memos: Map<string, WeakMap<KEY, VALUE>>,
  counter: TokenCounter,
): WeakMap<KEY, VALUE> {
  let memo = memos.get(counter.id);
  if (!memo) memos.set(counter.id, (memo = new WeakMap()));
  return memo;
}

/** `counter.scoped(scope)`, or `counter` itself when it keeps no cache to scope. */
export function scopeTokenCounter(counter: TokenCounter, scope: string): TokenCounter {
  return counter.scoped?.(scope) ?? counter;
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
    return createCachedTokenCounter(
      o200kTokenCounterId,
      guardLongRuns((text) => countTokens(text, options)),
    );
  });
  return o200kCounter;
}

/**
 * A counter over `count` whose counts of long texts are cached (bounded in entries and characters, oldest out
 * first), per scope: `scoped(scope)` looks up only what the same scope counted; the counter itself is scope `''`.
 */
export function createCachedTokenCounter(id: string, count: (text: string) => number): TokenCounter {
  const cache = new Map<string, number>();
  let cachedCharacters = 0;
  const counterFor = (scope: string): TokenCounter => ({
    id,
    count(text: string): number {
      if (text.length === 0) return 0;
      if (text.length < CACHE_MINIMUM_LENGTH) return count(text);
      const key = `${scope.length}:${scope}${text}`; // length-prefixed: no two (scope, text) pairs share a key
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const tokens = count(text);
      cache.set(key, tokens);
      cachedCharacters += key.length;
      while (cache.size > CACHE_MAXIMUM_ENTRIES || cachedCharacters > CACHE_MAXIMUM_CHARACTERS) {
        const oldest = cache.keys().next().value as string;
        cache.delete(oldest);
        cachedCharacters -= oldest.length;
      }
      return tokens;
    },
    scoped: (inner: string) => counterFor(`${scope.length}:${scope}${inner}`),
  });
  return counterFor('');
}
