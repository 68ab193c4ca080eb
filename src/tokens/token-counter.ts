import { asciiBytePairCount, isAsciiText } from './ascii-byte-pair-count.js';
import { createPieceCounter } from './piece-counter.js';

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
   * The same number as `count`, computed without holding the event loop for more than a few milliseconds at a time.
   * The store counts what it writes through it when it is there, so one long message does not stall other requests.
   */
  countAsync?(text: string): Promise<number>;
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
 * later call; it keeps no state between counts (its merge cache is off, a piece repeated within one text is
 * counted once), so counting is linear in the text whatever was counted before. `countAsync` gives the event loop a
 * turn every few milliseconds. Counts of long texts are cached (bounded, per scope), so a large tool result is
 * tokenized once.
 *
 * @example
 * const counter = await loadO200kTokenCounter();
 * counter.count('Hello, world'); // 4
 */
export function loadO200kTokenCounter(): Promise<TokenCounter> {
  o200kCounter ??= Promise.all([
    import('gpt-tokenizer/GptEncoding'),
    import('gpt-tokenizer/bpeRanks/o200k_base'),
    import('gpt-tokenizer/encodingParams/constants'),
  ]).then(([{ GptEncoding }, { default: ranks }, { O200K_TOKEN_SPLIT_REGEX }]) => {
    const encoding = GptEncoding.getEncodingApi('o200k_base', () => ranks);
    encoding.setMergeCacheSize(0);
    const options = { disallowedSpecial: new Set<string>() };
    const pieces = createPieceCounter(O200K_TOKEN_SPLIT_REGEX, ...pieceCountersOf(encoding, options));
    return createCachedTokenCounter(o200kTokenCounterId, pieces.count, pieces.countAsync);
  });
  return o200kCounter;
}

/**
 * A counter over `count` whose counts of long texts are cached (bounded in entries and characters, oldest out
 * first), per scope: `scoped(scope)` looks up only what the same scope counted; the counter itself is scope `''`.
 * `countAsync`, when given, must count as `count` does; the counter's own `countAsync` uses it for long texts.
 */
export function createCachedTokenCounter(
  id: string,
  count: (text: string) => number,
  countAsync?: (text: string) => Promise<number>,
): TokenCounter {
  const cache = new Map<string, number>();
  let cachedCharacters = 0;
  const remember = (key: string, tokens: number) => {
    if (cache.has(key)) return;
    cache.set(key, tokens);
    cachedCharacters += key.length;
    while (cache.size > CACHE_MAXIMUM_ENTRIES || cachedCharacters > CACHE_MAXIMUM_CHARACTERS) {
      const oldest = cache.keys().next().value as string;
      cache.delete(oldest);
      cachedCharacters -= oldest.length;
    }
  };
  const counterFor = (scope: string): TokenCounter => {
    // length-prefixed: no two (scope, text) pairs share a key
    const keyOf = (text: string) => `${scope.length}:${scope}${text}`;
    const counter: TokenCounter = {
      id,
      count(text: string): number {
        if (text.length === 0) return 0;
        if (text.length < CACHE_MINIMUM_LENGTH) return count(text);
        const key = keyOf(text);
        const cached = cache.get(key);
        if (cached !== undefined) return cached;
        const tokens = count(text);
        remember(key, tokens);
        return tokens;
      },
      scoped: (inner: string) => counterFor(keyOf(inner)),
    };
    if (countAsync) {
      counter.countAsync = async (text: string): Promise<number> => {
        if (text.length < CACHE_MINIMUM_LENGTH) return counter.count(text);
        const key = keyOf(text);
        const cached = cache.get(key);
        if (cached !== undefined) return cached;
        const tokens = await countAsync(text);
        remember(key, tokens);
        return tokens;
      };
    }
    return counter;
  };
  return counterFor('');
}

/** The parts of gpt-tokenizer's encoder that count one pre-tokenised piece (its `BytePairEncodingCore`). */
interface PieceEncoder {
  getBpeRankFromString(piece: string): number | undefined;
  bytePairEncode(piece: string): number[];
}

/**
 * How the default counter counts one piece: from the encoder's byte-pair core when this gpt-tokenizer has it (the
 * package is pinned to one version; tests hold the result to the library's own `countTokens`), an ASCII piece by
 * {@link asciiBytePairCount} on its ranks; else through `countTokens` per piece, which costs twice as much.
 */
function pieceCountersOf(
  encoding: { countTokens(text: string, options: object): number },
  options: object,
): [countPiece: (piece: string) => number, isOneToken?: (piece: string) => boolean] {
  const core = (encoding as { bytePairEncodingCoreProcessor?: Partial<PieceEncoder> }).bytePairEncodingCoreProcessor;
  if (typeof core?.getBpeRankFromString !== 'function' || typeof core.bytePairEncode !== 'function')
    return [(piece) => encoding.countTokens(piece, options)];
  const encoder = core as PieceEncoder;
  const rankOf = (token: string) => encoder.getBpeRankFromString(token);
  return [
    (piece) => (isAsciiText(piece) ? asciiBytePairCount(piece, rankOf) : encoder.bytePairEncode(piece).length),
    (piece) => rankOf(piece) !== undefined,
  ];
}
