// pruneContext with `toolTraffic: 'when-over-budget'` removes only what the budget needs: the oldest calls' traffic
// first, in whole chunks of the budget less the target (so that the cut stays where it was until the budget is
// reached again), or call by call to the budget when the target is the budget, the last call needed then previewed
// rather than removed when that fits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultContextPolicy } from '../../../src/context/index.js';
import { convertToContextSegments } from '../../../src/context/stages/convert-to-context-segments.js';
import { applyContextPruning } from '../../../src/context/stages/apply-context-pruning.js';
import { pruneContext, type PruneContextOptions } from '../../../src/context/stages/prune-context.js';
import {
  estimateSegments,
  renderSegments,
  type ContextSegment,
} from '../../../src/context/segments/context-segment.js';
import { toolTrafficChunkEnds } from '../../../src/context/stages/tool-traffic-chunks.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { toolPairProblems } from '../../support/check-generated-context.js';
import { assistant, smallMeasure, stepStart, stored, text, toolResult, user, words } from '../fixtures.js';

const measure = smallMeasure(1_000_000);
// Previews cut to the room and grown back: the fixed sizing has its own tests.
const preview = { ...defaultContextPolicy.toolOutputPreview, sizing: 'fit' as const };

/** One turn per size: a question, then an answer whose one tool call returns that many words. */
function turns(sizes: readonly number[]): ContextUIMessage[] {
  const messages = sizes.flatMap((size, index) => [
    user(`u${index}`, `Look up item ${index}.`),
    assistant(`a${index}`, stepStart, toolResult('search', `c${index}`, { item: index }, words(size)), text('Done.')),
  ]);
  return [...messages, user('last', 'And now?')];
}

const segmentsOf = (messages: ContextUIMessage[]) =>
  convertToContextSegments({ messages: messages.map((message, index) => stored(index + 1, message)), measure })
    .segments;

/** How many calls one chunk (or, without chunks, one call) fewer than `count` prunes. */
function fewerCalls(segments: ContextSegment[], sizes: readonly number[], count: number, chunkTokens: number): number {
  if (chunkTokens <= 0) return count - 1;
  const candidates = sizes.slice(0, -1).map((_size, index) => `c${index}`);
  const ends = toolTrafficChunkEnds(segments, candidates, chunkTokens);
  return Math.max(0, ...ends.filter((end) => end < count));
}

const prune = (options: Omit<PruneContextOptions, 'measure' | 'policy'>) =>
  pruneContext({ ...options, measure, policy: defaultContextPolicy.prune });

describe('pruneContext: oldest first, only what the budget needs', () => {
  const input = segmentsOf(turns([400, 400, 400, 400, 400]));
  const total = estimateSegments(input, measure);

  it('should remove the oldest call only, when that is enough to fit', () => {
    const { pruning, previews } = prune({ segments: input, messageBudget: total - 50 });
    expect(pruning.toolCallIds).toEqual(['c0']);
    expect(previews).toEqual([]);
  });

  it('should prune whole chunks of the budget less the target, the fewest that fit the budget', () => {
    const { pruning, segments } = prune({ segments: input, messageBudget: total - 50, targetTokens: total - 900 });
    // Chunks of about 850 tokens of traffic from the oldest call: c0 and c1 together.
    expect(pruning.toolCallIds).toEqual(['c0', 'c1']);
    expect(estimateSegments(segments, measure)).toBeLessThanOrEqual(total - 50);
    // The newest two turns keep their tool traffic even when the budget is out of reach.
    expect(prune({ segments: input, messageBudget: 10 }).pruning.toolCallIds).toEqual(['c0', 'c1', 'c2', 'c3']);
  });

  it('should cut at the same call after a turn is appended, while that still fits and the cut ends a whole chunk', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 600 }), { minLength: 4, maxLength: 14 }),
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0.3, max: 0.9, noNaN: true }),
        (sizes, added, ratio) => {
          const before = segmentsOf(turns(sizes));
          const messageBudget = Math.floor(estimateSegments(before, measure) * 0.8);
          const options = { messageBudget, targetTokens: Math.floor(messageBudget * ratio) };
          const first = prune({ ...options, segments: before }).pruning.toolCallIds;
          const grown = segmentsOf(turns([...sizes, added]));
          const kept = applyContextPruning({
            segments: grown,
            measure,
            reasoningFrom: () => false,
            toolCallIds: new Set(first),
            emptyMessages: 'remove',
          });
          const second = prune({ ...options, segments: grown }).pruning.toolCallIds;
          // A chunk still filling up (the newest) takes the calls added to it: a cut that ends there moves with it.
          const candidates = sizes.slice(0, -1).map((_size, index) => `c${index}`);
          const chunkTokens = messageBudget - options.targetTokens;
          const whole = toolTrafficChunkEnds(before, candidates, chunkTokens).slice(0, -1);
          if (whole.includes(first.length) && estimateSegments(kept.segments, measure) <= messageBudget)
            expect(second).toEqual(first);
          else expect(second.slice(0, first.length)).toEqual(first);
        },
      ),
      {
        numRuns: 200,
        examples: [
          [[1, 1, 169, 149], 1, 0.3],
          [[435, 1, 97, 360], 1, 0.3],
        ],
      },
    );
  });

  it('should say when the tokens beyond the segments, between their bounds, decide how much is pruned', () => {
    const options = { segments: input, messageBudget: total - 50 };
    // Within 10 tokens beyond the segments, the oldest call is enough whatever they are; within 600, it may not be.
    const sure = prune({ ...options, outsideTokensAtMost: 10 });
    expect(sure.pruning.toolCallIds).toEqual(['c0']);
    expect(sure.outsideDecides).toBe(false);
    const unsure = prune({ ...options, outsideTokensAtMost: 600 });
    expect(unsure.pruning.toolCallIds).toEqual(['c0']);
    expect(unsure.outsideDecides).toBe(true);
    expect(prune({ ...options, outsideTokens: 600 }).pruning.toolCallIds).toEqual(['c0', 'c1']);
    // A pruning that does not turn on the budget is the same whatever they are.
    const always = pruneContext({
      ...options,
      outsideTokensAtMost: 600,
      measure,
      policy: { ...defaultContextPolicy.prune, reasoning: 'none', toolTraffic: 'outside-newest-turns' },
    });
    expect(always.outsideDecides).toBe(false);
  });

  it('should say that calls before the segments decide a cut in chunks, unless all went and still do not fit', () => {
    // Chunks are counted from the oldest call: a window of the newest turns cannot know where the whole thread's end.
    const options = { segments: input, targetTokens: total - 900, outsideTokensAtMost: 10 };
    const middle = prune({ ...options, messageBudget: total - 50 });
    expect(middle.pruning.toolCallIds.length).toBeGreaterThan(0);
    expect(middle.pruning.toolCallIds.length).toBeLessThan(4);
    expect(middle.outsideDecides).toBe(true);
    // Nothing pruned: the whole thread's first chunk may reach into these segments.
    expect(prune({ ...options, messageBudget: total + 5 }).outsideDecides).toBe(true);
    // Every prunable call pruned and still over the budget: every chunking prunes the same.
    const all = prune({ ...options, messageBudget: 100, targetTokens: 50 });
    expect(all.pruning.toolCallIds).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(all.outsideDecides).toBe(false);
    // Without calls before the segments (no bounds apart), nothing is said.
    expect(prune({ ...options, outsideTokensAtMost: 0, messageBudget: total - 50 }).outsideDecides).toBe(false);
  });

  it('should preview the last call needed instead of removing it, when the preview fits', () => {
    const big = segmentsOf(turns([5000, 40, 40, 40]));
    const bigTotal = estimateSegments(big, measure);
    const target = bigTotal - 2000;
    const { pruning, previews, segments, report } = prune({
      segments: big,
      messageBudget: target,
      preview,
    });
    expect(pruning.toolCallIds).toEqual([]);
    expect(previews).toEqual([expect.objectContaining({ toolCallId: 'c0' })]);
    const after = estimateSegments(segments, measure);
    expect(after).toBeLessThanOrEqual(target);
    // The preview grew back into the room: removing the call would have left about 5,000 tokens of it unused.
    expect(after).toBeGreaterThan(target * 0.6);
    expect(report.removed.map((removal) => removal.reason)).toContain('tool-output-previewed');
    // Without preview sizes, the call goes whole.
    expect(prune({ segments: big, messageBudget: target }).pruning.toolCallIds).toEqual(['c0']);
  });

  it('should prune the fewest oldest calls that fit, whole pairs only, and change nothing when run again', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 600 }), { minLength: 1, maxLength: 12 }),
        fc.double({ min: 0.05, max: 1.2, noNaN: true }),
        fc.oneof(fc.constant(1), fc.double({ min: 0.3, max: 1, noNaN: true })),
        (sizes, budgetShare, ratio) => {
          const segments = segmentsOf(turns(sizes));
          const before = estimateSegments(segments, measure);
          const messageBudget = Math.floor(before * budgetShare);
          // Below the budget, whole chunks go until the budget fits; at the budget, calls one by one.
          const targetTokens = Math.floor(messageBudget * ratio);
          const fits = targetTokens < messageBudget ? messageBudget : targetTokens;
          const options = { segments, messageBudget, targetTokens };
          const result = prune(options);
          const pruned = result.pruning.toolCallIds;
          // Oldest first: the pruned calls are the oldest ones, in order.
          expect(pruned).toEqual(sizes.slice(0, pruned.length).map((_size, index) => `c${index}`));
          expect(toolPairProblems(renderSegments(result.segments))).toEqual([]);
          const after = estimateSegments(result.segments, measure);
          if (before <= messageBudget) expect(pruned).toEqual([]);
          else if (pruned.length < Math.max(0, sizes.length - 1)) {
            // Stopped before the protected turns: it fits, and one call fewer would not have.
            expect(after).toBeLessThanOrEqual(fits);
            const fewer = applyContextPruning({
              segments,
              measure,
              reasoningFrom: () => false,
              toolCallIds: new Set(
                pruned.slice(0, fewerCalls(segments, sizes, pruned.length, messageBudget - targetTokens)),
              ),
              emptyMessages: 'remove',
            });
            if (pruned.length > 0) expect(estimateSegments(fewer.segments, measure)).toBeGreaterThan(fits);
          }
          // Idempotent: its own output fits, or has nothing more to give.
          const again = prune({ ...options, segments: result.segments });
          if (after <= messageBudget) expect(again.segments).toEqual(result.segments);
        },
      ),
      { numRuns: 200 },
    );
  });
});
