import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonNestingDepth } from '../../../src/ai-sdk/chat-route/json-nesting-depth.js';

/** The nesting of a parsed value, counted on the value itself. */
const depthOf = (value: unknown): number =>
  typeof value === 'object' && value !== null
    ? 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf))
    : 0;

// Strings full of what the scan must not count: brackets, quotes, backslashes and escapes.
const tricky = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', '\n', '\u2028', '☃') });
const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    tricky,
    fc.integer(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('jsonNestingDepth', () => {
  it('should equal the depth of the parsed value, whatever its strings hold (property)', () => {
    fc.assert(
      fc.property(values, fc.boolean(), (value, indent) => {
        const text = JSON.stringify(value, null, indent ? 2 : undefined);
        expect(jsonNestingDepth(text, 1_000)).toBe(depthOf(JSON.parse(text)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('should stop counting one level past the limit (property)', () => {
    fc.assert(
      fc.property(values, fc.integer({ min: 0, max: 6 }), (value, limit) => {
        const text = JSON.stringify(value);
        expect(jsonNestingDepth(text, limit)).toBe(Math.min(depthOf(value), limit + 1));
      }),
    );
  });

  it('should count 2,000,000 levels of brackets only up to the limit', () => {
    const text = `${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}`;
    expect(jsonNestingDepth(text, 80)).toBe(81);
    expect(jsonNestingDepth(`"${text}"`, 80)).toBe(0);
  });
});
