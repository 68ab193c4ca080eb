import { describe, expect, it } from 'vitest';
import { lastAlignedIndex } from '../../../src/context/engine/last-aligned-index.js';

/** The last index of `given` paired with `stored`, items compared by value. */
const align = (given: readonly string[], stored: readonly string[]) =>
  lastAlignedIndex(given.length, stored.length, (x, y) => given[x] === stored[y]);

describe('lastAlignedIndex', () => {
  it('should pair every item of the same list, and none of two lists with nothing in common', () => {
    expect(align(['u1', 'a1', 'u2'], ['u1', 'a1', 'u2'])).toBe(2);
    expect(align(['x', 'y'], ['u1', 'a1'])).toBe(-1);
    expect(align([], ['u1'])).toBe(-1);
  });

  it('should skip the items either side lacks without moving the others', () => {
    // The caller lacks the store's closure (c1) and renders a1 otherwise (a1*); a1* must not pair with the later "OK."
    // and skip u2.
    expect(align(['u1', 'OK.', 'u2', 'OK.', 'new'], ['u1', 'a1', 'c1', 'u2', 'OK.'])).toBe(3);
  });

  it('should pair a repeated item with the earliest one it can, so a new one that reads the same stays new', () => {
    expect(align(['OK.', 'Fine.', 'OK.'], ['OK.', 'Fine.'])).toBe(1);
  });

  it('should give up on lists more than a thousand unpaired items apart', () => {
    const given = Array.from({ length: 501 }, (_item, index) => `given ${index}`);
    const stored = Array.from({ length: 500 }, (_item, index) => `stored ${index}`);
    expect(align(given, stored)).toBeUndefined();
    expect(align(given.slice(0, 500), stored)).toBe(-1);
  });
});
