// windowOutsideTokens bounds what the turns a window leaves out add to the whole thread's estimate, from their stored
// counts alone. Over generated, stressed threads (test/support/stressed-conversations.ts), every split at a user
// message and every pricing (a tokenizer factor, a calibration), the whole thread's own count of those turns, once
// its pruning has reached the window (every older call's traffic pruned, their reasoning pruned or kept), must lie
// between the two bounds: a window that decides with both then decides as the whole thread does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countStoredMessageTokens, countStoredPartTokens, storedTokenCountId } from '../../../src/context/index.js';
import type { ContextMessage } from '../../../src/model/context-store.js';
import { applyContextPruning } from '../../../src/context/stages/apply-context-pruning.js';
import { convertToContextSegments } from '../../../src/context/stages/convert-to-context-segments.js';
import { filterStoredMessages } from '../../../src/context/stages/filter-stored-messages.js';
import { validateStoredMessages } from '../../../src/context/stages/validate-stored-messages.js';
import { windowMessages } from '../../../src/context/engine/context-window.js';
import { windowOutsideTokens } from '../../../src/context/engine/window-outside-tokens.js';
import { createContextMeasure } from '../../../src/tokens/context-measure.js';
import { resolveModelProfile } from '../../../src/tokens/model-profile.js';
import { isToolUIPart } from '../../../src/model/context-ui-message.js';
import { mapApprovalsToCalls, segmentToolCallIds } from '../../../src/context/segments/segment-tool-calls.js';
import { generateStressedConversation, stressArbitrary } from '../../support/stressed-conversations.js';
import { tokenCounter } from '../fixtures.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

const counted = (row: ContextMessage): ContextMessage => ({
  ...row,
  tokenCount: countStoredMessageTokens({ message: row.message, tokenCounter }),
  tokenCounterId: storedTokenCountId(tokenCounter),
  partTokenCounts: countStoredPartTokens({ message: row.message, tokenCounter }),
});

describe('windowOutsideTokens', () => {
  it('should bound what the whole thread counts of the turns left out once its pruning reaches the window', () => {
    let bounded = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        stressArbitrary,
        fc.nat(),
        fc.constantFrom('gpt-4o', 'claude-sonnet-4-5', 'gemini-2.5-pro'),
        fc.constantFrom(1, 1.37),
        fc.boolean(),
        (seed, stress, at, modelId, calibration, allCounted) => {
          const generated = generateStressedConversation(seed, [2_000, 200_000], stress, tokenCounter).rows;
          // Every row counted by the engine's counter, as a store that counts each append writes them.
          const rows = allCounted ? generated.map(counted) : generated;
          const users = rows.flatMap((row, index) => (index > 0 && row.message.role === 'user' ? [index] : []));
          if (users.length === 0) return;
          const start = users[at % users.length]!;
          const measure = createContextMeasure({
            tokenCounter,
            profile: resolveModelProfile({ modelId }),
            calibration,
          });
          const inWindow = windowMessages(rows, start);
          const windowIds = new Set(
            inWindow.flatMap((row) => row.message.parts.filter(isToolUIPart).map((part) => String(part.toolCallId))),
          );
          const bounds = windowOutsideTokens({
            messages: rows.slice(0, start).filter((row) => row.pinned !== true),
            measure,
            assistantStatuses: ['completed', 'cancelled', 'failed'],
            limit: Number.POSITIVE_INFINITY,
            pruneToolTraffic: true,
            windowToolCallIds: windowIds,
          });
          // The whole thread as the stages get it, and its turns before the window (not pinned).
          const validated = validateStoredMessages({ messages: rows }).messages;
          const filtered = filterStoredMessages({ messages: validated }).messages;
          const { segments } = convertToContextSegments({ messages: filtered, measure });
          const firstSequence = rows[start]!.sequence;
          const outside = (index: number) => {
            const segment = segments[index]!;
            return segment.kind === 'message' && !segment.pinned && (segment.sequence ?? 0) < firstSequence;
          };
          const approvals = mapApprovalsToCalls(segments);
          const outsideCalls = new Set(
            segments.flatMap((segment, index) => (outside(index) ? segmentToolCallIds(segment, approvals) : [])),
          );
          for (const id of windowIds) outsideCalls.delete(id);
          const whole = (pruneReasoning: boolean) => {
            const pruned = applyContextPruning({
              segments,
              measure,
              reasoningFrom: (segment) => pruneReasoning && (segment.sequence ?? 0) < firstSequence,
              toolCallIds: outsideCalls,
              emptyMessages: 'remove',
            }).segments;
            let total = 0;
            for (const segment of pruned)
              if (segment.kind === 'message' && !segment.pinned && (segment.sequence ?? 0) < firstSequence)
                total += measure.estimate(segment.tokens);
            return total;
          };
          expect(bounds.least).toBeLessThanOrEqual(whole(true));
          expect(whole(false)).toBeLessThanOrEqual(bounds.most);
          if (allCounted && Number.isFinite(bounds.most)) bounded += 1;
        },
      ),
      { numRuns: RUNS },
    );
    // The upper bound must be finite in a good share of the threads counted throughout, or it bounds nothing.
    expect(bounded).toBeGreaterThan(RUNS / 10);
  });
});
