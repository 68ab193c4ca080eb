// The stages remember what they make of a frozen message array or segment (a store's cache hands the same ones to
// every request): its tool call ids, approval requests, whether it leaves tool work open, its tool-traffic key and
// its pruned form. Each memo must give what the same stage gives on fresh copies, which never hit a memo. Threads are
// drawn with tool call and approval ids from a pool of a few, so that ids repeat across turns (some providers number
// their calls) and an approval may be answered in another segment or turn than the one that asked.
import type { ModelMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveContextPolicy } from '../../../src/context/contracts/context-policy.js';
import { applyContextPruning } from '../../../src/context/stages/apply-context-pruning.js';
import { mapApprovalsToCalls, segmentToolCallIds } from '../../../src/context/segments/segment-tool-calls.js';
import { pruneContext } from '../../../src/context/stages/prune-context.js';
import {
  createMessageSegment,
  groupTurns,
  hasUnfinishedToolWork,
  renderSegments,
  type MessageSegment,
} from '../../../src/context/segments/context-segment.js';
import { freezeSegment } from '../../../src/context/segments/segment-facts.js';
import { smallMeasure, smallProfile, tokenCounter } from '../fixtures.js';
import { createContextMeasure, type ContextMeasure } from '../../../src/tokens/context-measure.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
const measure = smallMeasure(100_000);
// The measures requests price removals with: another calibration, other prices, and one that is not a profile's.
const measures: ContextMeasure[] = [
  measure,
  createContextMeasure({ tokenCounter, profile: smallProfile(100_000), calibration: 1.37 }),
  createContextMeasure({
    tokenCounter,
    profile: { ...smallProfile(100_000), perMessageTokens: 9, tokenizerFactor: 1.2 },
  }),
  { ...measure, estimate: (tally) => 2 * measure.estimate(tally) + 1 },
  // A profile's measure whose estimate was replaced on the object itself: its prices are not what it estimates with.
  Object.assign(createContextMeasure({ tokenCounter, profile: smallProfile(100_000) }), {
    estimate: (tally: Parameters<ContextMeasure['estimate']>[0]) => 3 * measure.estimate(tally),
  }),
];

const callId = fc.constantFrom('call-0', 'call-1', 'call-2', 'call-3');
const approvalId = fc.constantFrom('approval-0', 'approval-1', 'approval-2');
const words = fc.string({ minLength: 1, maxLength: 30 });

const assistantPart = fc.oneof(
  words.map((text) => ({ type: 'text', text })),
  words.map((text) => ({ type: 'reasoning', text })),
  fc.tuple(callId, words, fc.boolean()).map(([toolCallId, query, providerExecuted]) => ({
    type: 'tool-call',
    toolCallId,
    toolName: 'search',
    input: { query },
    ...(providerExecuted ? { providerExecuted: true } : {}),
  })),
  fc.tuple(approvalId, callId).map(([id, toolCallId]) => ({
    type: 'tool-approval-request',
    approvalId: id,
    toolCallId,
  })),
);
const toolPart = fc.oneof(
  fc.tuple(callId, words).map(([toolCallId, value]) => ({
    type: 'tool-result',
    toolCallId,
    toolName: 'search',
    output: { type: 'text', value },
  })),
  fc.tuple(approvalId, fc.boolean()).map(([id, approved]) => ({
    type: 'tool-approval-response',
    approvalId: id,
    approved,
  })),
);
const message: fc.Arbitrary<ModelMessage> = fc.oneof(
  words.map((text) => ({ role: 'user', content: [{ type: 'text', text }] }) as ModelMessage),
  fc.array(assistantPart, { maxLength: 4 }).map((content) => ({ role: 'assistant', content }) as ModelMessage),
  fc.array(toolPart, { minLength: 1, maxLength: 3 }).map((content) => ({ role: 'tool', content }) as ModelMessage),
);
const thread = fc.array(
  fc.record({ messages: fc.array(message, { minLength: 1, maxLength: 3 }), pinned: fc.boolean() }),
  { minLength: 1, maxLength: 14 },
);

// Every pruning policy.
const prunePolicies = fc.record({
  reasoning: fc.constantFrom('outside-newest-turns', 'all', 'none'),
  reasoningTurns: fc.integer({ min: 0, max: 3 }),
  toolTraffic: fc.constantFrom('when-over-budget', 'outside-newest-turns', 'none'),
  toolTrafficTurns: fc.integer({ min: 0, max: 3 }),
  emptyMessages: fc.constantFrom('remove', 'keep'),
});

type Drawn = Array<{ messages: ModelMessage[]; pinned: boolean }>;

// The segments as a store's cache hands them out: every array, message, part and the segment frozen, with facts.
function frozenSegments(drawn: Drawn): MessageSegment[] {
  return drawn.map(({ messages, pinned }, index) => {
    const copy = structuredClone(messages);
    for (const item of copy) deepFreeze(item);
    const segment = createMessageSegment({
      messages: Object.freeze(copy) as ModelMessage[],
      sequence: index + 1,
      pinned,
      measure,
    });
    return freezeSegment(segment);
  });
}

// Fresh copies: no memo knows them, and unfrozen objects are never remembered.
function freshSegments(drawn: Drawn): MessageSegment[] {
  return drawn.map(({ messages, pinned }, index) =>
    createMessageSegment({ messages: structuredClone(messages), sequence: index + 1, pinned, measure }),
  );
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

// The same messages, tallies, report and pruning record as the reference.
function expectSamePruning(result: ReturnType<typeof pruneContext>, expected: ReturnType<typeof pruneContext>) {
  expect(plain(renderSegments(result.segments))).toEqual(plain(renderSegments(expected.segments)));
  expect(result.segments.map((segment) => segment.tokens)).toEqual(expected.segments.map((segment) => segment.tokens));
  expect(plain(result.report)).toEqual(plain(expected.report));
  expect(plain(result.pruning)).toEqual(plain(expected.pruning));
}

describe('memos of frozen message arrays and segments', () => {
  it('should find the same tool ids, approvals and unfinished turns as on fresh copies, memo cold and warm', () => {
    fc.assert(
      fc.property(thread, (drawn) => {
        const frozen = frozenSegments(drawn);
        const fresh = freshSegments(drawn);
        for (let round = 0; round < 2; round++) {
          const approvals = mapApprovalsToCalls(frozen);
          expect([...approvals]).toEqual([...mapApprovalsToCalls(fresh)]);
          // The ids a segment mentions through an approval it answers depend on the map: the whole thread's, and
          // (as for a segment whose request was cut away) one of a part of it.
          const partial = mapApprovalsToCalls(frozen.slice(frozen.length >> 1));
          for (const map of [approvals, partial, approvals])
            frozen.forEach((segment, index) =>
              expect([...segmentToolCallIds(segment, map)].sort()).toEqual(
                [...segmentToolCallIds(fresh[index]!, map)].sort(),
              ),
            );
          // Every run of consecutive segments, as a turn or a part of one.
          for (let start = 0; start < frozen.length; start++)
            for (let end = start + 1; end <= frozen.length; end++)
              expect(hasUnfinishedToolWork(frozen.slice(start, end))).toBe(
                hasUnfinishedToolWork(fresh.slice(start, end)),
              );
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('should prune frozen segments as fresh copies are pruned, on every policy and on the second request too', () => {
    // Requests of one thread differ in what they prune from the same frozen segments: other policies and budgets,
    // and the thread grown by turns that use its ids again (a call is then kept everywhere its id is protected).
    const requests = fc.array(
      fc.record({
        prune: prunePolicies,
        budget: fc.integer({ min: 0, max: 400 }),
        grow: thread,
        reused: fc.subarray(['call-0', 'call-1', 'call-2', 'call-3']),
      }),
      { minLength: 1, maxLength: 4 },
    );
    // The newest turn calls tools whose ids older turns used: those calls are protected, the others are not.
    const newestTurn = (ids: string[]) => [
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'Again?' }] } as ModelMessage], pinned: false },
      {
        messages: [
          {
            role: 'assistant',
            content: ids.map((toolCallId) => ({ type: 'tool-call', toolCallId, toolName: 'search', input: {} })),
          } as ModelMessage,
        ],
        pinned: false,
      },
    ];
    fc.assert(
      fc.property(thread, requests, (drawn, asked) => {
        const frozen = frozenSegments(drawn);
        for (const { prune, budget: messageBudget, grow, reused } of [...asked, ...asked]) {
          const policy = resolveContextPolicy({ prune: prune as never }).prune;
          const grown = [...drawn, ...grow.slice(0, 3), ...newestTurn(reused)];
          const segments = [...frozen, ...freshSegments(grown).slice(frozen.length)];
          const expected = pruneContext({ segments: freshSegments(grown), measure, messageBudget, policy });
          const result = pruneContext({ segments, measure, messageBudget, policy });
          expectSamePruning(result, expected);
          expect(groupTurns(result.segments).length).toBe(groupTurns(expected.segments).length);
        }
      }),
      // Found by 1,500 runs when the key of a segment whose calls are partly kept was taken for the key of all:
      // call-0's result is kept (a newer assistant message calls it again, unanswered) and call-3's is not.
      { numRuns: RUNS, examples: [[partlyKept.thread, partlyKept.requests] as never] },
    );
  });

  it('should prune segments carrying their facts as fresh copies, wherever each request puts them', () => {
    // Each request takes some of the same frozen segments (a store's cache hands them out with their facts), in
    // another order and number: a segment is the current input in one, an older or protected turn in the next.
    const requests = fc.array(
      fc.record({
        prune: prunePolicies,
        budget: fc.integer({ min: 0, max: 400 }),
        picks: fc.array(fc.nat(13), { minLength: 1, maxLength: 16 }),
        // Each request prices the removals with its own measure: the removals a segment keeps are priced again.
        priced: fc.nat(measures.length - 1),
      }),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(thread, requests, (drawn, asked) => {
        const withFacts = frozenSegments(drawn);
        for (const { prune, budget: messageBudget, picks, priced } of [...asked, ...asked]) {
          const requestMeasure = measures[priced]!;
          const policy = resolveContextPolicy({ prune: prune as never }).prune;
          const chosen = picks.map((pick) => pick % withFacts.length);
          const segments = chosen.map((index) => withFacts[index]!);
          const fresh = chosen.map((index) => freshSegments(drawn)[index]!);
          expect(hasUnfinishedToolWork(segments)).toBe(hasUnfinishedToolWork(fresh));
          const map = mapApprovalsToCalls(segments);
          segments.forEach((segment, index) =>
            expect([...segmentToolCallIds(segment, map)].sort()).toEqual(
              [...segmentToolCallIds(fresh[index]!, map)].sort(),
            ),
          );
          const expected = pruneContext({ segments: fresh, measure: requestMeasure, messageBudget, policy });
          const result = pruneContext({ segments, measure: requestMeasure, messageBudget, policy });
          expectSamePruning(result, expected);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('should keep an approval response that answers no known request, whatever other calls are removed', () => {
    // The response's request was cut away (so it maps to no call), and the first request also removes a call whose
    // id is the empty string: the response must not be taken for that call's, in that request or (from a plan
    // remembered for the frozen array) in the next, where no such call exists.
    const messages = (): ModelMessage[] => [
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call-0', toolName: 'search', output: { type: 'text', value: 'found' } },
          { type: 'tool-approval-response', approvalId: 'approval-9', approved: true },
        ],
      },
    ];
    const frozenMessages = messages();
    for (const item of frozenMessages) deepFreeze(item);
    const frozen = Object.freeze(
      createMessageSegment({ messages: Object.freeze(frozenMessages) as ModelMessage[], sequence: 1, measure }),
    );
    const fresh = createMessageSegment({ messages: messages(), sequence: 1, measure });
    for (const ids of [['call-0', ''], ['call-0']]) {
      const prune = (segment: MessageSegment) =>
        applyContextPruning({
          segments: [segment],
          measure,
          reasoningFrom: () => false,
          toolCallIds: new Set(ids),
          emptyMessages: 'keep',
        });
      const result = prune(frozen);
      expect(plain(renderSegments(result.segments))).toEqual(plain(renderSegments(prune(fresh).segments)));
      expect(renderSegments(result.segments)[0]!.content).toEqual([
        { type: 'tool-approval-response', approvalId: 'approval-9', approved: true },
      ]);
    }
  });
});

const pruneWhenOver = {
  reasoning: 'outside-newest-turns',
  reasoningTurns: 0,
  toolTraffic: 'when-over-budget',
  toolTrafficTurns: 0,
  emptyMessages: 'remove',
};
const result = (toolCallId: string) =>
  ({
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId, toolName: 'search', output: { type: 'text', value: ' ' } }],
  }) as ModelMessage;
const partlyKept = {
  thread: [
    { messages: [result('call-0'), result('call-3')], pinned: false },
    { messages: [{ role: 'user', content: [{ type: 'text', text: ' ' }] } as ModelMessage], pinned: false },
  ],
  requests: [
    {
      prune: pruneWhenOver,
      budget: 0,
      grow: [
        {
          messages: [
            {
              role: 'tool',
              content: [{ type: 'tool-approval-response', approvalId: 'approval-0', approved: false }],
            } as ModelMessage,
          ],
          pinned: false,
        },
      ],
      reused: [],
    },
    {
      prune: pruneWhenOver,
      budget: 0,
      grow: [
        {
          messages: [
            {
              role: 'assistant',
              content: [{ type: 'tool-call', toolCallId: 'call-0', toolName: 'search', input: { query: ' ' } }],
            } as ModelMessage,
          ],
          pinned: false,
        },
        { messages: [{ role: 'assistant', content: [] } as ModelMessage], pinned: false },
      ],
      reused: [],
    },
  ],
};
