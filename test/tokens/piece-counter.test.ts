import fc from 'fast-check';
import ranks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/esm/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { countStoredPartTokens } from '../../src/tokens/count-stored-message-tokens.js';
import { asciiBytePairCount } from '../../src/tokens/ascii-byte-pair-count.js';
import { countWithoutBlocking } from '../../src/tokens/count-without-blocking.js';
import { guardLongRuns } from '../../src/tokens/guard-long-runs.js';
import { createPieceCounter } from '../../src/tokens/piece-counter.js';
import { loadO200kTokenCounter, type TokenCounter } from '../../src/tokens/token-counter.js';

// The default counter splits a text into the pre-tokeniser's pieces itself and hands gpt-tokenizer one distinct
// piece at a time, with the library's merge cache off. These tests hold it to the library's own count, and check
// linearity and independence from earlier counts by the work handed to the encoder (not by timing).

/** The longest piece the long-run guard lets through (its own tests hold it to the same bound). */
const PIECE_BOUND = 512;
const options = { disallowedSpecial: new Set<string>() };
/** gpt-tokenizer's own count behind the same guard: what the default counter must equal. */
const reference = guardLongRuns((text) => countTokens(text, options));

const units = [
  'a',
  'Z',
  'é',
  'ß',
  'ж',
  'Σ',
  '漢',
  '가',
  'の',
  '𠀀',
  '\u0301',
  '\u064B',
  '😀',
  '👍🏽',
  '🇫🇷',
  '👨‍👩‍👧‍👦',
  '\u200D',
  '\uFE0E',
  '\uE000',
  '\u0001',
  '─',
  '!',
  '.',
  '/',
  '-',
  "'s",
  "'LL",
  '0',
  '42',
  '٣',
  ' ',
  '  ',
  '\n',
  '\r\n',
  '\t',
  '\u00A0',
  '\u3000',
  '<|endoftext|>',
  '<|im_start|>',
  'Hello',
  ' world',
  'ABCdef',
];
/** Texts of every class the pre-tokeniser treats differently: runs, mixtures, any code unit, special tokens. */
const texts = fc.oneof(
  fc.array(fc.constantFrom(...units), { maxLength: 200 }).map((parts) => parts.join('')),
  fc
    .array(fc.tuple(fc.constantFrom(...units), fc.integer({ min: 1, max: 400 })), { minLength: 1, maxLength: 4 })
    .map((runs) => runs.map(([unit, length]) => unit.repeat(length)).join('')),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
);

/**
 * A piece counter over an encoder of its own with the merge cache off, as the default counter's, that records the
 * pieces it is handed. (Through the library's shared encoder, the attack below takes minutes in `reference`.)
 */
const encoding = GptEncoding.getEncodingApi('o200k_base', () => ranks);
encoding.setMergeCacheSize(0);
function recordingPieceCounter() {
  const handed: string[] = [];
  const counter = createPieceCounter(O200K_TOKEN_SPLIT_REGEX, (piece) => {
    handed.push(piece);
    return encoding.countTokens(piece, options);
  });
  return { counter, handed };
}

function randomWords(count: number, random: () => number): string {
  const words: string[] = [];
  for (let index = 0; index < count; index++) {
    let word = '';
    for (let letter = 0; letter < 6; letter++) word += String.fromCharCode(0x61 + Math.floor(random() * 26));
    words.push(word);
  }
  return words.join(' ');
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('the default counter', () => {
  it('should count every text as gpt-tokenizer does behind the guard, with count and countAsync alike', async () => {
    const counter = await loadO200kTokenCounter();
    await fc.assert(
      fc.asyncProperty(texts, async (text) => {
        const scoped = counter.scoped!(String(Math.random()));
        expect(scoped.count(text)).toBe(reference(text));
        expect(await scoped.countAsync!(text)).toBe(reference(text));
      }),
      { numRuns: 600 },
    );
  });

  it('should count long ordinary texts exactly as gpt-tokenizer does, without any guard', async () => {
    const counter = await loadO200kTokenCounter();
    const random = seeded(7);
    for (const text of [
      'The quick brown fox jumps over the lazy dog. '.repeat(2_000),
      randomWords(20_000, random),
      JSON.stringify(Array.from({ length: 2_000 }, (_, id) => ({ id, name: `item-${id}`, score: random() }))),
      '東京は日本の首都です。人口は約千四百万人で、世界有数の大都市です。'.repeat(1_000),
    ]) {
      expect(counter.count(text)).toBe(countTokens(text, options));
    }
  });
});

describe('asciiBytePairCount', () => {
  const core = (encoding as unknown as { bytePairEncodingCoreProcessor: { bytePairEncode(piece: string): number[] } })
    .bytePairEncodingCoreProcessor;
  const rankOf = (token: string) =>
    (
      encoding as unknown as {
        bytePairEncodingCoreProcessor: { getBpeRankFromString(token: string): number | undefined };
      }
    ).bytePairEncodingCoreProcessor.getBpeRankFromString(token);
  const ascii = fc.oneof(
    fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 300 }),
    fc.string({ unit: fc.constantFrom(...'etaoinshrdlu_-0123456789xyzqjkEIRST'), minLength: 1, maxLength: 40 }),
    fc
      .tuple(fc.nat(), fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789') }))
      .map(([index, suffix]) => `rec_${index}_${suffix}`),
  );

  it('should make as many tokens of every ASCII piece as gpt-tokenizer does, piece by piece', () => {
    fc.assert(
      fc.property(ascii, (text) => {
        for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX))
          expect(asciiBytePairCount(piece, rankOf)).toBe(core.bytePairEncode(piece).length);
        // Also on the whole text as one piece: the merge does not rely on how the pre-tokeniser cut it.
        expect(asciiBytePairCount(text.slice(0, 64), rankOf)).toBe(core.bytePairEncode(text.slice(0, 64)).length);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('createPieceCounter', () => {
  it('should hand the encoder each distinct piece once per count, none long, the same after any other count', () => {
    fc.assert(
      fc.property(texts, texts, (earlier, text) => {
        const alone = recordingPieceCounter();
        const total = alone.counter.count(text);
        const after = recordingPieceCounter();
        after.counter.count(earlier);
        after.handed.length = 0;
        expect(after.counter.count(text)).toBe(total);
        expect(after.handed).toEqual(alone.handed);
        expect(new Set(alone.handed).size).toBe(alone.handed.length);
        expect(alone.handed.join('').length).toBeLessThanOrEqual(text.length);
        for (const piece of alone.handed) expect(piece.length).toBeLessThanOrEqual(PIECE_BOUND);
      }),
      { numRuns: 400 },
    );
  });

  it('should count 1 MB of one repeated piece after 300,000 distinct words by handing the encoder a few pieces', () => {
    // The attack on gpt-tokenizer's shared merge cache: fill it with distinct words, then repeat one multi-token
    // piece. Here nothing carries over from one count to the next, and a repeated piece is counted once per text.
    const { counter, handed } = recordingPieceCounter();
    const random = seeded(11);
    counter.count(randomWords(150_000, random));
    counter.count(randomWords(150_000, random));
    handed.length = 0;
    const attack = 'x☃︎'.repeat(333_333);
    expect(counter.count(attack)).toBe(recordingPieceCounter().counter.count(attack));
    expect(handed.length).toBeLessThan(10);
  });

  it('should refuse a split expression that is not global, naming it', () => {
    expect(() => createPieceCounter(/\s+/u, () => 1)).toThrow('/\\s+/u');
  });
});

describe('countWithoutBlocking', () => {
  const cjk = (length: number, random: () => number) =>
    Array.from({ length }, () => String.fromCodePoint(0x4e00 + Math.floor(random() * 20_000))).join('');

  /** Runs `work` and counts the turns the event loop took meanwhile. */
  async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    await work();
    running = false;
    return turns;
  }

  it('should let the event loop turn while it counts 1 MB of random ideographs, and count as count does', async () => {
    const counter = await loadO200kTokenCounter();
    const text = cjk(330_000, seeded(3));
    let counted = 0;
    const turns = await turnsDuring(async () => {
      [counted] = await countWithoutBlocking(counter.scoped!('a'), (each) => [each.count(text)]);
    });
    expect(counted).toBe(counter.scoped!('b').count(text));
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it('should count synchronously through a counter without countAsync: the turns above come from countAsync', async () => {
    const { count } = await loadO200kTokenCounter();
    const plain: TokenCounter = { id: 'plain', count };
    const text = cjk(100_000, seeded(4));
    const turns = await turnsDuring(() => countWithoutBlocking(plain, (each) => [each.count(text)]));
    expect(turns).toBeLessThanOrEqual(1);
  });

  it("should give a message's parts the counts a synchronous count gives, before and after", async () => {
    const counter = (await loadO200kTokenCounter()).scoped!('parts');
    const random = seeded(5);
    const message = {
      id: 'a-1',
      role: 'assistant' as const,
      parts: [
        { type: 'text' as const, text: randomWords(3_000, random) },
        { type: 'reasoning' as const, text: cjk(5_000, random) },
        {
          type: 'tool-read' as const,
          toolCallId: 'call-1',
          state: 'output-available' as const,
          input: { path: 'a.txt' },
          output: { text: randomWords(2_000, random) },
        },
        { type: 'text' as const, text: 'Done.' },
      ],
    };
    const synchronous = countStoredPartTokens({ message, tokenCounter: counter });
    const gathered = await countWithoutBlocking(counter, (each) =>
      countStoredPartTokens({ message, tokenCounter: each }),
    );
    expect(gathered).toEqual(synchronous);
    expect(countStoredPartTokens({ message, tokenCounter: counter })).toEqual(synchronous);
    expect(synchronous.every((tokens) => tokens > 0)).toBe(true);
  });
});
