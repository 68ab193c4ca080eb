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
import { emptySnapshotPruning, shortensTextBefore } from '../../../src/context/engine/context-snapshot-pruning.js';
import { createContextMeasure, type ContextMeasure } from '../../../src/tokens/context-measure.js';
import { resolveModelProfile } from '../../../src/tokens/model-profile.js';
import { isToolUIPart } from '../../../src/model/context-ui-message.js';
import { mapApprovalsToCalls, segmentToolCallIds } from '../../../src/context/segments/segment-tool-calls.js';
import { generateStressedConversation, stressArbitrary } from '../../support/stressed-conversations.js';
import { stored, tokenCounter } from '../fixtures.js';
import type { ContextSegment } from '../../../src/context/segments/context-segment.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

const counted = (row: ContextMessage): ContextMessage => ({
  ...row,
  tokenCount: countStoredMessageTokens({ message: row.message, tokenCounter }),
  tokenCounterId: storedTokenCountId(tokenCounter),
  partTokenCounts: countStoredPartTokens({ message: row.message, tokenCounter }),
});

/**
 * Expects the whole thread's count of the turns before `start` (not pinned), once every older call's traffic is
 * pruned (their reasoning pruned, for the least; kept, for the most), within the bounds; returns the bounds.
 */
function expectBounded(
  rows: readonly ContextMessage[],
  start: number,
  measure: ContextMeasure,
  emptyMessages: 'remove' | 'keep',
): { least: number; most: number } {
  const windowIds = new Set(
    windowMessages(rows, start).flatMap((row) =>
      row.message.parts.filter(isToolUIPart).map((part) => String(part.toolCallId)),
    ),
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
  const outside = (segment: ContextSegment) =>
    segment.kind === 'message' && !segment.pinned && (segment.sequence ?? 0) < firstSequence;
  const approvals = mapApprovalsToCalls(segments);
  const outsideCalls = new Set(
    segments.flatMap((segment) => (outside(segment) ? segmentToolCallIds(segment, approvals) : [])),
  );
  for (const id of windowIds) outsideCalls.delete(id);
  const whole = (pruneReasoning: boolean) => {
    const pruned = applyContextPruning({
      segments,
      measure,
      reasoningFrom: (segment) => pruneReasoning && (segment.sequence ?? 0) < firstSequence,
      toolCallIds: outsideCalls,
      emptyMessages,
    }).segments;
    let total = 0;
    for (const segment of pruned) if (outside(segment)) total += measure.estimate(segment.tokens);
    return total;
  };
  expect(bounds.least).toBeLessThanOrEqual(whole(true));
  expect(whole(false)).toBeLessThanOrEqual(bounds.most);
  return bounds;
}

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
        fc.constantFrom('remove' as const, 'keep' as const),
        (seed, stress, at, modelId, calibration, allCounted, emptyMessages) => {
          const generated = generateStressedConversation(seed, [2_000, 200_000], stress, tokenCounter).rows;
          // Every row counted by the engine's counter, as a store that counts each append writes them.
          const rows = allCounted ? generated.map(counted) : generated;
          const users = rows.flatMap((row, index) => (index > 0 && row.message.role === 'user' ? [index] : []));
          if (users.length === 0) return;
          const profile = resolveModelProfile({ modelId });
          const measure = createContextMeasure({ tokenCounter, profile, calibration });
          const bounds = expectBounded(rows, users[at % users.length]!, measure, emptyMessages);
          if (allCounted && Number.isFinite(bounds.most)) bounded += 1;
        },
      ),
      { numRuns: RUNS },
    );
    // The upper bound must be finite in a good share of the threads counted throughout, or it bounds nothing.
    expect(bounded).toBeGreaterThan(RUNS / 10);
  });

  it('should count every message a part may open, when empty messages are kept', () => {
    // Found by review: empty steering messages, and calls the filter closes (one part, a call and a result), each
    // keep a framed message of their own once pruned.
    const measure = createContextMeasure({ tokenCounter, profile: resolveModelProfile({ modelId: 'gpt-4o' }) });
    const steering = (id: string) => ({ type: 'steering-message', id, parts: [] });
    const unfinished = (id: string) => [
      { type: 'step-start' },
      { type: 'tool-readFile', toolCallId: id, state: 'input-available', input: { path: 'a' } },
    ];
    const threads = [
      [steering('s1'), steering('s2'), steering('s3'), steering('s4'), { type: 'text', text: 'ok' }],
      [...Array.from({ length: 12 }, (_call, index) => unfinished(`c${index}`)).flat(), { type: 'text', text: 'ok' }],
    ];
    for (const parts of threads) {
      const rows = [
        { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
        { id: 'a1', role: 'assistant', parts },
        { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'newest' }] },
      ].map((message, index) => counted(stored(index + 1, message as ContextUIMessage)));
      expect(Number.isFinite(expectBounded(rows, 2, measure, 'keep').most)).toBe(true);
    }
  });
});

describe('shortensTextBefore', () => {
  it('should say when a carried cut may shorten a text before a sequence, and only then', () => {
    const content = { toolCallId: 'key', maxTokens: 40, part: 'content', sequence: 5 };
    const output = { toolCallId: 'c1', maxTokens: 40, sequence: 5 };
    const pruned = (record: object) => ({ ...emptySnapshotPruning(), ...record });
    // A content preview or a dropped round before the window: its text may be shorter in the whole thread.
    expect(shortensTextBefore(pruned({ previews: [content] }), 6)).toBe(true);
    expect(shortensTextBefore(pruned({ droppedRounds: [{ sequence: 5, key: 'r' }] }), 6)).toBe(true);
    // A content preview recorded without its message may apply anywhere.
    expect(shortensTextBefore(pruned({ previews: [{ ...content, sequence: undefined }] }), 6)).toBe(true);
    // In the window, or a tool output's preview (the lower bound counts no tool traffic): nothing before it changes.
    expect(shortensTextBefore(pruned({ previews: [content], droppedRounds: [{ sequence: 5, key: 'r' }] }), 5)).toBe(
      false,
    );
    expect(shortensTextBefore(pruned({ previews: [output] }), 6)).toBe(false);
    expect(shortensTextBefore(null, 6)).toBe(false);
  });
});
