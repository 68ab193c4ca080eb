import { guardedSegments } from './guard-long-runs.js';

/** Distinct pieces remembered within one count: enough for the vocabulary of a long text; never evicted. */
const MAX_REMEMBERED_PIECES = 16_384;
/** How long {@link PieceCounter.countAsync} computes before it lets the event loop serve others, in ms. */
export const YIELD_AFTER_MS = 8;
/** Characters counted between two readings of the clock: one piece of 128 can take a millisecond. */
const CHARACTERS_BETWEEN_CLOCK_READS = 256;

/** Counts a text as the sum of its pre-tokenised pieces; see {@link createPieceCounter}. */
export interface PieceCounter {
  count(text: string): number;
  /** The same count, giving the event loop a turn whenever it has computed for {@link YIELD_AFTER_MS}. */
  countAsync(text: string): Promise<number>;
}

/**
 * A counter that splits a text into the pieces of a byte-pair tokenizer's pre-tokeniser (`split`, the tokenizer's own
 * expression) and sums `countPiece` over them, after the {@link guardedSegments} guard. A piece repeated within one
 * text is counted once (a memo that lives for that one call, bounded and never reordered), so the work is linear in
 * the text and the same in every state of the process: nothing one caller counted changes what another's costs.
 * `countPiece` must hold no cache of its own across calls (gpt-tokenizer's merge cache, a `Map` reordered on every
 * hit, turns quadratic once full). `isOneToken`, when given, says which pieces are a token of the vocabulary as they
 * are; they are counted as 1 without `countPiece`.
 *
 * @example
 * const counter = createPieceCounter(O200K_TOKEN_SPLIT_REGEX, (piece) => encoding.countTokens(piece));
 * counter.count('Hello, world'); // 4
 */
export function createPieceCounter(
  split: RegExp,
  countPiece: (piece: string) => number,
  isOneToken: (piece: string) => boolean = () => false,
): PieceCounter {
  if (!split.global) throw new TypeError(`expected a global expression, got ${String(split)}`);
  const countSegment = (segment: string, memo: Map<string, number>): number => {
    let total = 0;
    for (const [piece] of segment.matchAll(split)) total += countRemembered(piece, memo);
    return total;
  };
  const countRemembered = (piece: string, memo: Map<string, number>): number => {
    // Most pieces of ordinary text are a token of the vocabulary: one lookup, nothing to remember.
    if (isOneToken(piece)) return 1;
    let tokens = memo.get(piece);
    if (tokens === undefined) {
      tokens = countPiece(piece);
      if (memo.size < MAX_REMEMBERED_PIECES) memo.set(piece, tokens);
    }
    return tokens;
  };
  return {
    count(text) {
      const memo = new Map<string, number>();
      let total = 0;
      for (const segment of guardedSegments(text)) total += countSegment(segment, memo);
      return total;
    },
    async countAsync(text) {
      const memo = new Map<string, number>();
      let total = 0;
      let computingSince = performance.now();
      let sinceClockRead = 0;
      for (const segment of guardedSegments(text)) {
        // matchAll copies the expression: another count running between two turns does not move this one's place.
        for (const [piece] of segment.matchAll(split)) {
          total += countRemembered(piece, memo);
          sinceClockRead += piece.length;
          if (sinceClockRead < CHARACTERS_BETWEEN_CLOCK_READS) continue;
          sinceClockRead = 0;
          if (performance.now() - computingSince < YIELD_AFTER_MS) continue;
          await nextTurn();
          computingSince = performance.now();
        }
      }
      return total;
    },
  };
}

/** Resolves on a later turn of the event loop, after pending I/O callbacks (a microtask would not let them run). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}
