import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/esm/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { findLongRuns, guardLongRuns, mayHoldLongRun } from '../../src/tokens/guard-long-runs.js';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';

// Byte-pair encoding is quadratic in the length of one piece of the pre-tokeniser, so the counter is linear in
// its input exactly when no piece it is handed is longer than a constant. These tests check that bound on the
// pieces the guard hands to the tokenizer, for text drawn from every Unicode class the pre-tokeniser treats
// differently, instead of timing anything.
const PIECE_BOUND = 512;

/** Samples of each class: letters, marks, ideographs, emoji with joiners, format, private use, controls… */
const CLASSES: Record<string, string[]> = {
  lowercase: ['a', 'z', 'é', 'ß', 'ж'],
  uppercase: ['A', 'Z', 'Ж', 'Σ'],
  ideographs: ['漢', '字', '가', 'の', '𠀀'],
  marks: ['\u0301', '\u0308', '\u064B', '\u20DD'],
  emoji: ['😀', '👍🏽', '🇫🇷', '👨‍👩‍👧‍👦', '❤️'],
  format: ['\u200D', '\u200B', '\u2060', '\uFE0F', '\u00AD'],
  privateUse: ['\uE000', '\uF8FF', '\u{F0000}'],
  controls: ['\u0001', '\u001B', '\u007F'],
  symbols: ['─', '∑', '©', '$', '^', '`'],
  punctuation: ['!', '.', '/', '-', '«', '「'],
  // One piece of the pre-tokeniser: a symbol followed by any run of CR, LF and `/` (found by the fuzz test).
  slashesAndLineBreaks: ['/\r\n', '!\n/'],
  digits: ['0', '7', '٣', '½'],
  unassigned: ['\u0378', '\u{E0080}'],
  whitespace: [' ', '\n', '\r\n', '\t', '\u00A0', '\u3000'],
  mathLetters: ['𝔘', '𝒜'],
};

const run = fc
  .record({
    samples: fc.subarray(Object.values(CLASSES).flat(), { minLength: 1, maxLength: 4 }),
    length: fc.integer({ min: 1, max: 1500 }),
  })
  .map(({ samples, length }) => Array.from({ length }, (_, index) => samples[index % samples.length]).join(''));
const hostileText = fc.array(run, { minLength: 1, maxLength: 6 }).map((runs) => runs.join(''));

function longestPiece(text: string): number {
  let longest = 0;
  for (const match of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) longest = Math.max(longest, match[0].length);
  return longest;
}

describe('guardLongRuns', () => {
  it('should hand the tokenizer no piece longer than a constant, for text of any Unicode class', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const slices: string[] = [];
        guardLongRuns((slice) => (slices.push(slice), 0))(text);
        expect(slices.join('')).toBe(text);
        expect(Math.max(...slices.map(longestPiece))).toBeLessThanOrEqual(PIECE_BOUND);
        for (const slice of slices) expect(slice.isWellFormed()).toBe(true);
      }),
      { numRuns: 800 },
    );
  });

  it.each(Object.entries(CLASSES))('should bound the pieces of 200 KB of %s', (_name, samples) => {
    for (const sample of samples) {
      const text = sample.repeat(Math.ceil(200_000 / sample.length));
      const slices: string[] = [];
      guardLongRuns((slice) => (slices.push(slice), 0))(text);
      expect(slices.join('')).toBe(text);
      expect(Math.max(...slices.map(longestPiece))).toBeLessThanOrEqual(PIECE_BOUND);
    }
  });

  it('should count ordinary text exactly: prose, code, JSON, CJK with punctuation, URLs, emoji', () => {
    const exact = (slice: string) => countTokens(slice, { disallowedSpecial: new Set() });
    const ordinary = [
      'The quick brown fox jumps over the lazy dog. '.repeat(200),
      'function add(a: number, b: number) {\n  return a + b;\n}\n'.repeat(100),
      JSON.stringify(Array.from({ length: 200 }, (_, id) => ({ id, name: `item-${id}`, tags: ['a', 'b'] }))),
      '東京は日本の首都です。人口は約千四百万人で、世界有数の大都市です。'.repeat(100),
      'See https://example.com/a/b/c?query=1&next=2#anchor for details 👍🏽. '.repeat(100),
    ];
    for (const text of ordinary) {
      const calls: string[] = [];
      expect(guardLongRuns((slice) => (calls.push(slice), exact(slice)))(text)).toBe(exact(text));
      expect(calls).toEqual([text]);
    }
  });
});

describe('mayHoldLongRun', () => {
  // The pre-check that skips the four Unicode-class scans for ordinary text: it may say "look" for nothing, never
  // "no run" for a text with one. Texts mix hostile runs (every class, up to 1,500 units) with prose and runs
  // just under and over 256 units, and a text is cut anywhere (a run at the very start or end).
  const nearBound = fc
    .record({
      sample: fc.constantFrom(...Object.values(CLASSES).flat()),
      length: fc.integer({ min: 240, max: 270 }),
    })
    .map(({ sample, length }) => sample.repeat(length).slice(0, length));
  const prose = fc.constantFrom('The quick brown fox. ', 'a b ', '東京は日本の首都です。', ' ', '\n', '{"a": 1} ');
  const mixed = fc
    .array(fc.oneof(run, nearBound, prose), { minLength: 1, maxLength: 8 })
    .chain((parts) => fc.nat(2).map((cut) => parts.join('').slice(cut)));

  it('should never rule out a text that has a long run', () => {
    fc.assert(
      fc.property(mixed, (text) => {
        if (!mayHoldLongRun(text)) expect(findLongRuns(text)).toEqual([]);
      }),
      { numRuns: 2_000 },
    );
  });

  it('should rule out ordinary prose, so it is counted in one call', () => {
    expect(mayHoldLongRun('The quick brown fox jumps over the lazy dog. '.repeat(200))).toBe(false);
    expect(mayHoldLongRun(`${'x'.repeat(255)} ${'\t'.repeat(254)}`)).toBe(false);
    expect(mayHoldLongRun('x'.repeat(256))).toBe(true);
    expect(mayHoldLongRun(' '.repeat(256))).toBe(true);
  });
});

describe('loadO200kTokenCounter', () => {
  it('should count 1 MB of family emoji and 144 KB of zero-width joiners (minutes before the guard covered them)', async () => {
    const counter = await loadO200kTokenCounter();
    const family = '👨‍👩‍👧‍👦'.repeat(Math.ceil(1_000_000 / 11));
    expect(counter.count(family)).toBeGreaterThan(family.length / 2);
    expect(counter.count('\u200D'.repeat(144_000))).toBe(144_000);
  });
});
