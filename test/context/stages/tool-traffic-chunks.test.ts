// toolTrafficChunkEnds splits the prunable calls into chunks whose ends depend on each call alone: the newest turns
// of a thread, chunked by themselves, end their chunks where the whole thread does (a window of the newest turns
// prunes what the whole thread prunes), and a growing thread keeps the chunks it had.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { convertToContextSegments } from '../../../src/context/stages/convert-to-context-segments.js';
import { toolTrafficChunkEnds } from '../../../src/context/stages/tool-traffic-chunks.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { assistant, smallMeasure, stepStart, stored, text, toolResult, user, words } from '../fixtures.js';

const measure = smallMeasure(1_000_000);

/** One turn per size, from turn `from` on: a question, then an answer whose one tool call returns that many words. */
function turns(sizes: readonly number[], from = 0): ContextUIMessage[] {
  return sizes.flatMap((size, offset) => [
    user(`u${from + offset}`, `Look up item ${from + offset}.`),
    assistant(
      `a${from + offset}`,
      stepStart,
      toolResult('search', `c${from + offset}`, {}, words(size)),
      text('Done.'),
    ),
  ]);
}

const segmentsOf = (messages: ContextUIMessage[]) =>
  convertToContextSegments({ messages: messages.map((message, index) => stored(index + 1, message)), measure })
    .segments;

type ContentPart = { type: string; toolCallId?: string; output?: unknown };

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_id, index) => `c${from + index}`);

describe('toolTrafficChunkEnds', () => {
  it('should end the chunks of the newest turns where the whole thread ends them', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 900 }), { minLength: 2, maxLength: 30 }),
        fc.nat(),
        fc.integer({ min: 50, max: 3_000 }),
        (sizes, at, chunkTokens) => {
          const split = 1 + (at % (sizes.length - 1));
          const whole = toolTrafficChunkEnds(segmentsOf(turns(sizes)), ids(0, sizes.length), chunkTokens);
          const newest = toolTrafficChunkEnds(
            segmentsOf(turns(sizes.slice(split), split)),
            ids(split, sizes.length),
            chunkTokens,
          );
          // The whole thread's ends after the split, counted from it: the same cuts.
          expect(newest).toEqual(whole.filter((end) => end > split).map((end) => end - split));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('should make chunks of about the chunk size on average, and end one at every call of at least that size', () => {
    const random = fc.sample(fc.integer({ min: 1, max: 300 }), { numRuns: 2_000, seed: 7 });
    const segments = segmentsOf(turns(random));
    const ends = toolTrafficChunkEnds(segments, ids(0, random.length), 1_000);
    // Each call's traffic as the chunks count it: its output, about four characters a token.
    const sizes = random.map((_size, index) => {
      const part = segments
        .flatMap((segment) => segment.messages)
        .flatMap((message) => (typeof message.content === 'string' ? [] : (message.content as ContentPart[])))
        .find((item) => item.type === 'tool-result' && item.toolCallId === `c${index}`);
      return Math.ceil(JSON.stringify((part as { output: unknown }).output).length / 4);
    });
    const chunks = ends.map((end, index) =>
      sizes.slice(ends[index - 1] ?? 0, end).reduce((sum, size) => sum + size, 0),
    );
    const mean = chunks.reduce((sum, size) => sum + size, 0) / chunks.length;
    expect(mean).toBeGreaterThan(800);
    expect(mean).toBeLessThan(1_250);
    const large = segmentsOf(turns([5, 2_000, 5, 5]));
    expect(toolTrafficChunkEnds(large, ids(0, 4), 1_000)).toContain(2);
  });
});
