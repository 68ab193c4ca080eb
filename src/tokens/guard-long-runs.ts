const LONG_RUN = 256;
const SLICE = 128;

/**
 * Wraps an exact counter so that no input can block the event loop for long. Byte-pair encoding is quadratic in
 * the length of one pre-tokenised piece: 100 KB of `aaaa…` takes 12-23 s in gpt-tokenizer, 1 MB of family emoji
 * (joined by U+200D) minutes. Every run of 256 or more characters of one pre-tokeniser class (letters and marks;
 * anything not a space, letter or digit, which takes in emoji, joiners, format and control characters, private
 * use and unassigned code points; whitespace; CR, LF and `/`) is counted in 128-character slices, so the counter is linear in
 * its input for every Unicode class: at most about 130 ms per MB (`npm run bench`, W6). Such runs count about
 * +0.1 % higher; ordinary text has none and is counted exactly as before.
 *
 * @example
 * const count = guardLongRuns((text) => countTokens(text));
 * count('a'.repeat(100_000)); // 12,500, in milliseconds
 */
export function guardLongRuns(countExact: (text: string) => number): (text: string) => number {
  return (text) => {
    let total = 0;
    for (const segment of guardedSegments(text)) total += countExact(segment);
    return total;
  };
}

/**
 * The texts {@link guardLongRuns} counts exactly, in order, for a text: the text itself when it holds no long run,
 * else the stretches between long runs and each run's 128-character slices. They join to `text`.
 */
export function* guardedSegments(text: string): Generator<string> {
  if (text.length === 0) return;
  if (text.length < LONG_RUN || !mayHoldLongRun(text)) {
    yield text;
    return;
  }
  let cursor = 0;
  for (const [start, end] of findLongRuns(text)) {
    if (start > cursor) yield text.slice(cursor, start);
    let at = start;
    while (at < end) {
      let next = Math.min(at + SLICE, end);
      // Never split a surrogate pair.
      if (next < end && isHighSurrogate(text.charCodeAt(next - 1))) next += 1;
      yield text.slice(at, next);
      at = next;
    }
    cursor = end;
  }
  if (cursor < text.length) yield text.slice(cursor);
}

// A BPE piece of the o200k pre-tokeniser is a run of letters and marks, a run of anything that is not a space,
// letter or digit (marks included) followed by any run of CR, LF and `/` (so `/\r\n/\r\n…` is one piece), or a
// run of whitespace; digits come in pieces of at most three. A long piece
// can only lie inside a long run of one of these classes, so those runs (merged where letter and other runs
// overlap on marks) are what gets sliced. Each class is found with one greedy pass: linear in the text.
const classRuns = [/[\p{L}\p{M}]+/gu, /[^\s\p{L}\p{N}]+/gu, /\s+/gu, /[\r\n/]+/gu];

/**
 * False only when `text` has no long run: one pass over its UTF-16 units, no regular expression, for the common
 * case (prose: a space at least every 256 units, no 256 whitespace units in a row), where {@link findLongRuns}'
 * four Unicode-class scans cost about as much as a fifth of the tokenizing. A run of letters, of non-space
 * non-letter non-digits, or of CR, LF and `/` never holds U+0020, so it lies within a stretch without one; a run
 * of whitespace lies within a stretch of units that `isMaybeSpace` accepts (a superset of `\s`). True means "look".
 */
export function mayHoldLongRun(text: string): boolean {
  let sinceSpace = 0;
  let spaces = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x20) sinceSpace = 0;
    else if (++sinceSpace >= LONG_RUN) return true;
    if (isMaybeSpace(code)) {
      if (++spaces >= LONG_RUN) return true;
    } else spaces = 0;
  }
  return false;
}

/** Every unit `\s` matches, and more (every unit from U+00A0 on): only ever used to rule runs out. */
function isMaybeSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code >= 0xa0;
}

/** Start and end offsets of the long runs in `text`, in order and not overlapping. */
export function findLongRuns(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const pattern of classRuns) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      if (match[0].length >= LONG_RUN) found.push([match.index, match.index + match[0].length]);
    }
  }
  found.sort((a, b) => a[0] - b[0]);
  const runs: Array<[number, number]> = [];
  for (const [start, end] of found) {
    const last = runs.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else runs.push([start, end]);
  }
  return runs;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
