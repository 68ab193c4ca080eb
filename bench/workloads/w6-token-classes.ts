// W6: the default token counter on 1 MB of one Unicode class at a time (one message of family emoji once blocked
// the event loop for minutes). `count` is synchronous: each timing is what the text costs the thread (the store
// counts through `countAsync`, which yields every few milliseconds; `npm run bench:tokens` measures that). Side by
// side: the bare tokenizer without the long-run guard, on a smaller slice of the same text (at 1 MB it runs for
// minutes on the pathological classes).
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { TokenCounter } from '../../src/tokens/token-counter.js';

/** One megabyte (UTF-16 units) of each class: the classes the o200k pre-tokeniser treats differently. */
export const TOKEN_CLASS_SAMPLES: Record<string, string> = {
  'latin letters': 'a',
  'CJK ideographs': '漢',
  'family emoji (ZWJ)': '👨‍👩‍👧‍👦',
  'zero-width joiner': '\u200D',
  'combining marks': '\u0301',
  'private use': '\uE000',
  'control characters': '\u0001',
  'box drawing': '─',
  punctuation: '!',
  digits: '7',
  spaces: ' ',
  newlines: '\n',
  'slashes and CR LF': '/\r\n',
  'no-break spaces': '\u00a0',
  'prose (mixed)': 'The quick brown fox, 漢字 and 👍, jumps over 13 lazy dogs.\n',
  'letters then emoji, 255 each': 'a'.repeat(255) + '😀'.repeat(127),
};

/**
 * The tokenizer caches the encoding of each piece, so a text of one repeated unit is cheap after its first slice.
 * These classes draw every code point at random (seeded), so no two slices repeat: the uncached cost per MB.
 */
const RANDOM_CLASSES: Record<string, [number, number]> = {
  'random latin letters (uncached)': [0x61, 0x7a],
  'random CJK ideographs (uncached)': [0x4e00, 0x9fff],
  'random emoji (uncached)': [0x1f300, 0x1f5ff],
  'random private use (uncached)': [0xe000, 0xf8ff],
};

function randomText([from, to]: [number, number], chars: number, runSeed: number): string {
  let seed = 42 + runSeed * 7919;
  const points: number[] = [];
  for (let length = 0; length < chars;) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    const point = from + (seed % (to - from + 1));
    points.push(point);
    length += point > 0xffff ? 2 : 1;
  }
  return points
    .map((point) => String.fromCodePoint(point))
    .join('')
    .slice(0, chars);
}

export interface TokenClassTiming {
  sample: string;
  guardedMsPerMB: number;
  guardedTokensPerMB: number;
  bareChars: number;
  bareMs: number;
}

/** Times the guarded counter on `bytes` of each class and the bare tokenizer on `bareChars` of it. */
export function runTokenClasses({
  counter,
  chars = 1_000_000,
  bareChars = 16_000,
  seed = 0,
}: {
  counter: TokenCounter;
  chars?: number;
  bareChars?: number;
  seed?: number;
}): TokenClassTiming[] {
  const options = { disallowedSpecial: new Set<string>() };
  const bare = (text: string) => countTokens(text, options);
  const guarded = (text: string) => counter.count(text);
  guarded('warm up the tokenizer '.repeat(100));
  const texts: Array<[string, string]> = [
    ...Object.entries(TOKEN_CLASS_SAMPLES).map(([sample, unit]): [string, string] => [
      sample,
      unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars),
    ]),
    ...Object.entries(RANDOM_CLASSES).map(([sample, range]): [string, string] => [
      sample,
      randomText(range, chars, seed),
    ]),
  ];
  return texts.map(([sample, text]) => {
    let started = performance.now();
    const tokens = guarded(text);
    const guardedMs = performance.now() - started;
    started = performance.now();
    bare(text.slice(0, bareChars));
    const bareMs = performance.now() - started;
    return {
      sample,
      guardedMsPerMB: Math.round((guardedMs * 1_000_000) / chars),
      guardedTokensPerMB: Math.round((tokens * 1_000_000) / chars),
      bareChars,
      bareMs: Math.round(bareMs),
    };
  });
}
