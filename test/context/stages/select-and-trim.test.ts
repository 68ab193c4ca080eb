import { describe, expect, it } from 'vitest';
import { convertToContextSegments } from '../../../src/context/stages/convert-to-context-segments.js';
import { createMemorySegment } from '../../../src/context/segments/memory-segment.js';
import {
  createMessageSegment,
  estimateSegments,
  groupTurns,
  renderSegments,
  type ContextSegment,
} from '../../../src/context/segments/context-segment.js';
import { createSummarySegment } from '../../../src/context/segments/summary-segment.js';
import { defaultContextPolicy } from '../../../src/context/index.js';
import { selectContext } from '../../../src/context/stages/select-context.js';
import { toolInputPreviewKey, toolInputPreviewMarker } from '../../../src/context/stages/preview-tool-input.js';
import { toolOutputPreviewMarker } from '../../../src/context/stages/preview-tool-output.js';
import { shrinkNewestTurn, trimContext } from '../../../src/context/stages/trim-context.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import {
  assistant,
  reasoning,
  smallMeasure,
  stepStart,
  stored,
  text,
  tokenCounter,
  toolResult,
  user,
  words,
} from '../fixtures.js';

const measure = smallMeasure();
const fourTurns: ContextUIMessage[] = [
  user('u1', `Turn one. ${words(100, 'alpha')}`),
  assistant('a1', text(`Answer one. ${words(100, 'beta')}`)),
  user('u2', `Turn two. ${words(100, 'gamma')}`),
  assistant('a2', text(`Answer two. ${words(100, 'delta')}`)),
  user('u3', `Turn three. ${words(100, 'epsilon')}`),
  assistant('a3', text(`Answer three. ${words(100, 'zeta')}`)),
  user('u4', 'Turn four: the newest question.'),
];
const segmentsOf = (messages: ContextUIMessage[], pinned: number[] = [], firstSequence = 1) =>
  convertToContextSegments({
    messages: messages.map((message, index) =>
      stored(firstSequence + index, message, { pinned: pinned.includes(firstSequence + index) }),
    ),
    measure,
  }).segments;
const summary = createSummarySegment({
  summary: { id: 'summary-1', fromSequence: 1, throughSequence: 10, content: '## Goals\n- Plan a trip' },
  measure,
});
const memory = createMemorySegment({
  messages: [stored(3, user('m', 'I am allergic to peanuts'))],
  measure,
  maxTokens: 200,
  messageCharacters: 200,
})!;
const sequences = (segments: readonly ContextSegment[]) =>
  segments.map((segment) => (segment.kind === 'message' ? segment.sequence : segment.kind));
const cost = (segments: readonly ContextSegment[]) => estimateSegments(segments, measure);

describe('selectContext', () => {
  it('should keep everything, as the same objects, when the context fits', () => {
    const input = segmentsOf(fourTurns);
    const { segments, overflow, report } = selectContext({ segments: input, measure, messageBudget: cost(input) });
    expect(segments).toEqual(input);
    expect(overflow).toEqual([]);
    expect(report).toEqual({ stage: 'select', removed: [], keptTurns: 4, overflowTurns: 0, tokensSaved: 0 });
  });

  it('should keep the newest whole turns that fit the target and set older ones aside, oldest first', () => {
    const input = [summary, ...segmentsOf(fourTurns)];
    const newestTwo = cost([summary, ...input.slice(-3)]);
    const { segments, overflow, report } = selectContext({
      segments: input,
      measure,
      messageBudget: cost(input) - 1,
      targetTokens: newestTwo,
      overflowReason: 'turn-summarized',
    });
    expect(sequences(segments)).toEqual(['summary', 5, 6, 7]);
    expect(overflow.map((turn) => turn.map((segment) => segment.sequence))).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(report).toMatchObject({
      keptTurns: 2,
      overflowTurns: 2,
      removed: [1, 2, 3, 4].map((sequence) => expect.objectContaining({ sequence, reason: 'turn-summarized' })),
    });
  });

  it('should keep pinned messages, the memory and a turn with unfinished tool work whatever the target', () => {
    const pending = createMessageSegment({
      messages: [
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c9', toolName: 'deploy', input: {} }] },
      ],
      sequence: 2,
      measure,
    });
    const input = [
      memory,
      ...segmentsOf(fourTurns.slice(0, 1), [], 1),
      pending,
      ...segmentsOf(fourTurns.slice(2), [3], 3),
    ];
    const { segments, overflow } = selectContext({ segments: input, measure, messageBudget: 1, targetTokens: 1 });
    expect(sequences(segments)).toEqual(['memory', 1, 2, 3, 7]);
    expect(overflow.map((turn) => turn.map((segment) => segment.sequence))).toEqual([[4], [5, 6]]);
  });

  it('should be idempotent', () => {
    const input = [summary, ...segmentsOf(fourTurns, [2])];
    const options = { measure, messageBudget: cost(input) - 1, targetTokens: Math.floor(cost(input) / 2) };
    const once = selectContext({ segments: input, ...options });
    const twice = selectContext({ segments: once.segments, ...options });
    expect(twice.segments).toEqual(once.segments);
    expect(twice.overflow).toEqual([]);
  });
});

const hugeReport = JSON.stringify({
  rows: Array.from({ length: 3000 }, (_row, index) => ({
    id: index,
    name: `row ${index}`,
    status: index % 3 ? 'ok' : 'failed',
    note: 'lorem ipsum dolor sit amet',
  })),
});
const hugeToolTurn: ContextUIMessage[] = [
  user('u9', 'Summarize the report'),
  assistant(
    'a9',
    stepStart,
    toolResult('fetchReport', 'c-big', { id: 7 }, hugeReport),
    stepStart,
    text('Working on it.'),
  ),
];
// Previews cut to the room and grown back: the fixed sizing has its own tests.
const preview = { ...defaultContextPolicy.toolOutputPreview, sizing: 'fit' as const };

describe('trimContext', () => {
  it('should drop whole turns, oldest first, and keep pinned messages', () => {
    const input = segmentsOf(fourTurns, [2]);
    const budget = cost(input) - cost(input.slice(2, 4));
    const { segments, report } = trimContext({ segments: input, measure, messageBudget: budget, preview });
    expect(sequences(segments)).toEqual([2, 5, 6, 7]);
    // Older turns are tried newest first; the first that does not fit goes with every older one.
    expect(report.removed.map((removal) => [removal.sequence, removal.reason])).toEqual([
      [3, 'turn-trimmed'],
      [4, 'turn-trimmed'],
      [1, 'turn-trimmed'],
    ]);
    expect(report.overBudgetTokens).toBe(0);
    expect(cost(segments)).toBeLessThanOrEqual(budget);
  });

  it('should drop the memory before the summary, and keep the summary before older turns', () => {
    const input = [summary, memory, ...segmentsOf(fourTurns.slice(-1), [], 7)];
    const { segments, report } = trimContext({ segments: input, measure, messageBudget: cost(input) - 1, preview });
    expect(sequences(segments)).toEqual(['summary', 7]);
    expect(report.removed.map((removal) => removal.reason)).toEqual(['memory-dropped']);
    const tighter = trimContext({ segments: input, measure, messageBudget: cost(input.slice(2)), preview });
    expect(sequences(tighter.segments)).toEqual([7]);
    expect(tighter.report.removed.map((removal) => removal.reason)).toEqual(['summary-dropped', 'memory-dropped']);
  });

  it('should turn an oversized tool output of the newest turn into a marked preview, keeping the call with its result and the older turns that then fit', () => {
    const input = [...segmentsOf(fourTurns.slice(0, 2)), ...segmentsOf(hugeToolTurn, [], 3)];
    const budget = 2000;
    const { segments, report } = trimContext({ segments: input, measure, messageBudget: budget, preview });
    expect(sequences(segments)).toEqual([1, 2, 3, 4]);
    const messages = renderSegments(segments).slice(2);
    expect(messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Summarize the report' }] });
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c-big', toolName: 'fetchReport', input: { id: 7 } }],
    });
    const result = (
      messages[2]!.content as Array<{ type: string; toolCallId: string; output: { type: string; value: string } }>
    )[0]!;
    expect(result).toMatchObject({ type: 'tool-result', toolCallId: 'c-big', output: { type: 'text' } });
    expect(result.output.value.startsWith(`${toolOutputPreviewMarker} the first `)).toBe(true);
    expect(result.output.value).toContain(
      `of ${tokenCounter.count(hugeReport)} tokens are shown; the full output is in the conversation log.]\n{"rows":[{"id":0,`,
    );
    // Previewed at the first size so that older turns fit, then grown back into the room they left.
    expect(report.previews).toEqual([{ toolCallId: 'c-big', maxTokens: expect.any(Number), sequence: 4 }]);
    expect(report.previews[0]!.maxTokens).toBeGreaterThanOrEqual(preview.tokens);
    expect(tokenCounter.count(result.output.value)).toBeLessThanOrEqual(report.previews[0]!.maxTokens);
    expect(cost(segments)).toBeGreaterThan(budget * 0.95);
    expect(report.overBudgetTokens).toBe(0);
    expect(cost(segments)).toBeLessThanOrEqual(budget);
  });

  it('should halve previews when the first size is not enough, then let them grow into the room left', () => {
    const input = segmentsOf(hugeToolTurn, [], 3);
    const { report, segments } = trimContext({ segments: input, measure, messageBudget: 300, preview });
    expect(report.previews).toEqual([{ toolCallId: 'c-big', maxTokens: expect.any(Number), sequence: 4 }]);
    expect(report.previews[0]!.maxTokens).toBeGreaterThan(200);
    expect(report.previews[0]!.maxTokens).toBeLessThan(500);
    expect(cost(segments)).toBeLessThanOrEqual(300);
  });

  it('should throw rather than return an over-budget context when the newest input alone does not fit', () => {
    const input = segmentsOf([user('u1', words(500))]);
    expect(() => trimContext({ segments: input, measure, messageBudget: 100, preview })).toThrow(
      expect.objectContaining({
        name: 'ContextBudgetExceededError',
        messageBudgetTokens: 100,
        requiredTokens: cost(input),
      }),
    );
  });

  it('should drop old reasoning, then whole rounds of the newest turn, oldest first, to fit, never splitting one', () => {
    const rounds = [
      user('u1', 'Check the three services.'),
      assistant(
        'a1',
        stepStart,
        reasoning(words(40, 'think')),
        toolResult('status', 'c1', { service: 'api' }, { ok: true, log: words(30, 'api') }),
        stepStart,
        reasoning(words(40, 'more')),
        toolResult('status', 'c2', { service: 'db' }, { ok: true, log: words(30, 'db') }),
        stepStart,
        reasoning('last thought'),
        toolResult('status', 'c3', { service: 'queue' }, { ok: false }),
      ),
    ];
    const input = segmentsOf(rounds);
    const newestOnly = segmentsOf([rounds[0]!]);
    const budget = cost(newestOnly) + 60;
    expect(cost(input)).toBeGreaterThan(budget);
    const { segments, report } = trimContext({ segments: input, measure, messageBudget: budget, preview });
    expect(cost(segments)).toBeLessThanOrEqual(budget);
    const sent = renderSegments(segments);
    expect(sent[0]).toEqual(renderSegments(newestOnly)[0]);
    const calls = sent.flatMap((message) =>
      typeof message.content === 'string' ? [] : message.content.filter((part) => part.type === 'tool-call'),
    );
    const results = sent.flatMap((message) =>
      typeof message.content === 'string' ? [] : message.content.filter((part) => part.type === 'tool-result'),
    );
    expect(calls.map((part) => part.toolCallId)).toEqual(['c3']);
    expect(results.map((part) => part.toolCallId)).toEqual(['c3']);
    expect(JSON.stringify(sent)).toContain('last thought');
    expect(report.removed.map((removal) => removal.reason)).toEqual([
      'reasoning-pruned',
      'round-trimmed',
      'round-trimmed',
      'round-trimmed',
      'round-trimmed',
    ]);
  });

  it('should drop the results the AI SDK added after a round it drops, never leaving them without their call', () => {
    // The newest turn's last round awaits no more: its approved call ran before the first step, and its result is an
    // unstored tool message of its own after the stored message. The round's long text cannot be shortened.
    const input = [
      ...segmentsOf([
        user('u1', 'Deploy the fix.'),
        assistant('a1', stepStart, text(words(200, 'plan')), {
          type: 'tool-deploy',
          toolCallId: 'c1',
          state: 'approval-responded',
          input: { target: 'prod' },
          approval: { id: 'p1', approved: true },
        }),
      ]),
      createMessageSegment({
        messages: [
          {
            role: 'tool',
            content: [
              { type: 'tool-result', toolCallId: 'c1', toolName: 'deploy', output: { type: 'text', value: 'ok' } },
            ],
          },
        ],
        sequence: null,
        measure,
      }),
    ];
    const budget = cost(segmentsOf([user('u1', 'Deploy the fix.')])) + 40;
    const { segments } = trimContext({ segments: input, measure, messageBudget: budget, preview });
    expect(renderSegments(segments)).toEqual(renderSegments(segmentsOf([user('u1', 'Deploy the fix.')])));
  });

  it('should remove the old reasoning of the newest turn before previewing any of its tool outputs', () => {
    const turn = [
      user('u1', 'Read the report and check it.'),
      assistant(
        'a1',
        stepStart,
        reasoning(words(300, 'think')),
        toolResult('fetchReport', 'c1', { id: 1 }, hugeReport.slice(0, 4000)),
        stepStart,
        reasoning('newest thought'),
        text('Done.'),
      ),
    ];
    const input = segmentsOf(turn);
    const budget = cost(input) - 250;
    const { segments, report } = trimContext({ segments: input, measure, messageBudget: budget, preview });
    expect(report.removed.map((removal) => removal.reason)).toEqual(['reasoning-pruned']);
    expect(report.previews).toEqual([]);
    expect(JSON.stringify(renderSegments(segments))).toContain('newest thought');
    expect(cost(segments)).toBeLessThanOrEqual(budget);
  });

  it('should preview a large tool input of the newest turn, in an older round too, before dropping any round', () => {
    const bigInput = { path: 'notes.md', content: words(3000, 'line') };
    const turn = [
      user('u1', 'Write the notes and then check them.'),
      assistant(
        'a1',
        stepStart,
        toolResult('writeFile', 'c-write', bigInput, { ok: true }),
        stepStart,
        toolResult('readFile', 'c-read', { path: 'notes.md' }, { ok: true }),
        stepStart,
        text('Written.'),
      ),
    ];
    const input = segmentsOf(turn);
    const { segments, report } = trimContext({ segments: input, measure, messageBudget: 1500, preview });
    expect(cost(segments)).toBeLessThanOrEqual(1500);
    expect(report.previews).toEqual([
      { toolCallId: 'c-write', maxTokens: expect.any(Number), part: 'input', sequence: 2 },
    ]);
    expect(report.removed.some((removal) => removal.reason === 'round-trimmed')).toBe(false);
    const call = renderSegments(segments)
      .flatMap((message) => (typeof message.content === 'string' ? [] : [...message.content]))
      .find((part) => part.type === 'tool-call' && part.toolCallId === 'c-write') as unknown as {
      input: Record<string, string>;
    };
    expect(Object.keys(call.input)).toEqual([toolInputPreviewKey]);
    expect(call.input[toolInputPreviewKey]!.startsWith(toolInputPreviewMarker)).toBe(true);
  });

  it('should shrink a huge previous turn (reasoning, previews) rather than drop it when the newest turn is tiny', () => {
    const previous = [
      user('u1', 'Fetch the report.'),
      assistant(
        'a1',
        stepStart,
        reasoning(words(200, 'ponder')),
        toolResult('fetchReport', 'c-big', { id: 7 }, hugeReport),
        stepStart,
        text('Here it is.'),
      ),
    ];
    const input = [
      ...segmentsOf(fourTurns.slice(0, 2)),
      ...segmentsOf(previous, [], 3),
      ...segmentsOf([user('u5', 'Thanks!')], [], 5),
    ];
    const budget = 3000;
    const { segments, report } = trimContext({ segments: input, measure, messageBudget: budget, preview });
    expect(sequences(segments)).toEqual([1, 2, 3, 4, 5]);
    expect(report.previews.map((entry) => entry.toolCallId)).toEqual(['c-big']);
    expect(report.removed.map((removal) => removal.reason).sort()).toEqual([
      'reasoning-pruned',
      'tool-output-previewed',
    ]);
    expect(cost(segments)).toBeLessThanOrEqual(budget);
    expect(cost(segments)).toBeGreaterThan(budget * 0.95);
  });

  it('should be idempotent', () => {
    const input = [summary, memory, ...segmentsOf(fourTurns.slice(0, 6), [2]), ...segmentsOf(hugeToolTurn, [], 7)];
    for (const budget of [100_000, 3000, 1500, 600]) {
      const once = trimContext({ segments: input, measure, messageBudget: budget, preview });
      const twice = trimContext({ segments: once.segments, measure, messageBudget: budget, preview });
      expect(renderSegments(twice.segments)).toEqual(renderSegments(once.segments));
      expect(twice.report.removed).toEqual([]);
      expect(groupTurns(twice.segments)).toEqual(groupTurns(once.segments));
    }
  });
});

describe('shrinkNewestTurn', () => {
  // A pinned answer with a large tool output, then the newest question: what may never be dropped is over the
  // target, and the context as a whole within the budget only without what a window leaves out.
  const input = [...segmentsOf(hugeToolTurn, [2], 1), ...segmentsOf(fourTurns.slice(-1), [], 3)];
  const budget = cost(input) + 10;
  const targetTokens = Math.floor(budget / 4);

  it('should leave what is required whole over the target while the context fits, and say when more outside would not', () => {
    const options = { segments: input, measure, messageBudget: budget, preview, targetTokens };
    // Up to 11 tokens left out: the whole thread may be over the budget, and would then be shrunk.
    const unsure = shrinkNewestTurn({ ...options, outsideTokensAtMost: 11 });
    expect(unsure.outsideDecides).toBe(true);
    expect(unsure.previews).toEqual([]);
    expect(unsure.segments).toEqual(input);
    // Up to 10: it fits whatever they are.
    const sure = shrinkNewestTurn({ ...options, outsideTokensAtMost: 10 });
    expect(sure.outsideDecides).toBe(false);
    expect(sure.segments).toEqual(input);
    expect(shrinkNewestTurn(options).outsideDecides).toBe(false);
  });

  it('should count the tokens a window leaves out with the context, and shrink towards the target', () => {
    const result = shrinkNewestTurn({
      segments: input,
      measure,
      messageBudget: budget,
      preview,
      targetTokens,
      outsideTokens: 11,
      outsideTokensAtMost: 40,
    });
    expect(result.outsideDecides).toBe(false);
    expect(result.previews).toEqual([{ toolCallId: 'c-big', maxTokens: expect.any(Number), sequence: 2 }]);
    expect(cost(result.segments)).toBeLessThan(cost(input) / 2);
  });

  it('should not say it kept anything as fitting when what is required is within the target', () => {
    const small = segmentsOf(fourTurns);
    const result = shrinkNewestTurn({
      segments: small,
      measure,
      messageBudget: cost(small) - 1,
      preview,
      outsideTokensAtMost: 1_000,
    });
    expect(result.outsideDecides).toBe(false);
  });
});
