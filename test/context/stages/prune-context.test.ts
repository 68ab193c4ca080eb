import { describe, expect, it } from 'vitest';
import { convertToContextSegments } from '../../../src/context/stages/convert-to-context-segments.js';
import { defaultContextPolicy, type ContextPrunePolicy } from '../../../src/context/index.js';
import { pruneContext } from '../../../src/context/stages/prune-context.js';
import { estimateSegments, renderSegments } from '../../../src/context/segments/context-segment.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { assistant, reasoning, smallMeasure, stepStart, stored, text, toolResult, user } from '../fixtures.js';

const threeWeatherTurns: ContextUIMessage[] = [
  user('u1', 'Weather in Paris?'),
  assistant(
    'a1',
    stepStart,
    reasoning('plan one'),
    toolResult('weather', 'c1', { city: 'Paris' }, { tempC: 18 }),
    stepStart,
    text('Paris is 18C.'),
  ),
  user('u2', 'Weather in Rome?'),
  assistant(
    'a2',
    stepStart,
    reasoning('plan two'),
    toolResult('weather', 'c2', { city: 'Rome' }, { tempC: 21 }),
    stepStart,
    text('Rome is 21C.'),
  ),
  user('u3', 'Weather in Oslo?'),
  assistant(
    'a3',
    stepStart,
    reasoning('plan three'),
    toolResult('weather', 'c3', { city: 'Oslo' }, { tempC: 3 }),
    stepStart,
    text('Oslo is 3C.'),
  ),
  user('u4', 'And Berlin?'),
];

const approvalTurn: ContextUIMessage[] = [
  user('u1', 'Delete /tmp'),
  assistant(
    'a1',
    {
      type: 'tool-delete',
      toolCallId: 'c-del',
      state: 'output-available',
      input: { path: '/tmp' },
      output: 'deleted',
      approval: { id: 'ap-1', approved: true },
    },
    stepStart,
    text('Deleted.'),
  ),
  user('u2', 'Thanks'),
  assistant('a2', text('You are welcome.')),
  user('u3', 'Bye'),
];

const measure = smallMeasure();
const segmentsOf = (messages: ContextUIMessage[], pinned: number[] = []) =>
  convertToContextSegments({
    messages: messages.map((message, index) => stored(index + 1, message, { pinned: pinned.includes(index + 1) })),
    measure,
  }).segments;
const policy = (overrides: Partial<ContextPrunePolicy> = {}): ContextPrunePolicy => ({
  ...defaultContextPolicy.prune,
  ...overrides,
});

describe('pruneContext', () => {
  describe('reasoning', () => {
    it('should remove reasoning outside the newest turn and keep everything else while the context fits', () => {
      const { segments, report, pruning } = pruneContext({
        segments: segmentsOf(threeWeatherTurns),
        measure,
        messageBudget: 10_000,
        policy: policy({ reasoning: 'outside-newest-turns' }),
      });
      expect(renderSegments(segments)).toEqual(
        renderSegments(segmentsOf(threeWeatherTurns)).map((message) =>
          message.role === 'assistant' && Array.isArray(message.content)
            ? { ...message, content: message.content.filter((part) => part.type !== 'reasoning') }
            : message,
        ),
      );
      expect(report).toEqual({
        stage: 'prune',
        removed: [
          { sequence: 2, reason: 'reasoning-pruned', tokens: 2 },
          { sequence: 4, reason: 'reasoning-pruned', tokens: 2 },
          { sequence: 6, reason: 'reasoning-pruned', tokens: 2 },
        ],
        toolTraffic: 'kept',
        tokensSaved: 6,
      });
      expect(pruning).toEqual({
        reasoningSequences: [2, 4, 6],
        toolCallIds: [],
        toolCallSequences: [],
        emptyMessages: 'remove',
      });
    });

    it('should keep the reasoning of the newest turns and of pinned messages', () => {
      const { pruning } = pruneContext({
        segments: segmentsOf(threeWeatherTurns, [2]),
        measure,
        messageBudget: 10_000,
        policy: policy({ reasoning: 'outside-newest-turns', reasoningTurns: 2 }),
      });
      expect(pruning.reasoningSequences).toEqual([4]);
    });

    describe("reasoning: 'when-over-budget' (the default)", () => {
      it('should keep every reasoning while the context fits, so a turn is sent again as it was first sent', () => {
        const input = segmentsOf(threeWeatherTurns);
        const { segments, pruning } = pruneContext({
          segments: input,
          measure,
          messageBudget: 10_000,
          policy: policy(),
        });
        expect(defaultContextPolicy.prune.reasoning).toBe('when-over-budget');
        expect(segments).toEqual(input);
        expect(pruning.reasoningSequences).toEqual([]);
      });

      it('should remove reasoning outside the newest turn once the context is over the budget', () => {
        const input = segmentsOf(threeWeatherTurns);
        const whole = estimateSegments(input, measure);
        const { pruning } = pruneContext({
          segments: input,
          measure,
          messageBudget: whole - 1,
          policy: policy({ toolTraffic: 'none' }),
        });
        expect(pruning.reasoningSequences).toEqual([2, 4, 6]);
      });

      it('should prune old tool traffic first and keep the reasoning when that is enough', () => {
        const input = segmentsOf(threeWeatherTurns);
        const withoutTraffic = pruneContext({
          segments: input,
          measure,
          messageBudget: 10,
          policy: policy({ reasoning: 'none', toolTraffic: 'outside-newest-turns', toolTrafficTurns: 1 }),
        });
        const { pruning } = pruneContext({
          segments: input,
          measure,
          messageBudget: estimateSegments(withoutTraffic.segments, measure),
          targetTokens: estimateSegments(withoutTraffic.segments, measure),
          policy: policy({ toolTrafficTurns: 1 }),
        });
        expect(pruning.toolCallIds.length).toBeGreaterThan(0);
        expect(pruning.reasoningSequences).toEqual([]);
      });
    });

    it('should keep all reasoning with reasoning: none', () => {
      const input = segmentsOf(threeWeatherTurns);
      const { segments } = pruneContext({
        segments: input,
        measure,
        messageBudget: 10_000,
        policy: policy({ reasoning: 'none' }),
      });
      expect(segments).toEqual(input);
      expect(segments.every((segment, index) => segment === input[index])).toBe(true);
    });
  });

  describe('toolTraffic', () => {
    it('should remove calls and results outside the newest two turns together when over budget, leaving the answers', () => {
      const { segments, report } = pruneContext({
        segments: segmentsOf(threeWeatherTurns),
        measure,
        messageBudget: 10,
        policy: policy(),
      });
      expect(renderSegments(segments)).toMatchInlineSnapshot(`
        [
          {
            "content": [
              {
                "text": "Weather in Paris?",
                "type": "text",
              },
            ],
            "role": "user",
          },
          {
            "content": [
              {
                "text": "Paris is 18C.",
                "type": "text",
              },
            ],
            "role": "assistant",
          },
          {
            "content": [
              {
                "text": "Weather in Rome?",
                "type": "text",
              },
            ],
            "role": "user",
          },
          {
            "content": [
              {
                "text": "Rome is 21C.",
                "type": "text",
              },
            ],
            "role": "assistant",
          },
          {
            "content": [
              {
                "text": "Weather in Oslo?",
                "type": "text",
              },
            ],
            "role": "user",
          },
          {
            "content": [
              {
                "input": {
                  "city": "Oslo",
                },
                "toolCallId": "c3",
                "toolName": "weather",
                "type": "tool-call",
              },
            ],
            "role": "assistant",
          },
          {
            "content": [
              {
                "output": {
                  "type": "json",
                  "value": {
                    "tempC": 3,
                  },
                },
                "toolCallId": "c3",
                "toolName": "weather",
                "type": "tool-result",
              },
            ],
            "role": "tool",
          },
          {
            "content": [
              {
                "text": "Oslo is 3C.",
                "type": "text",
              },
            ],
            "role": "assistant",
          },
          {
            "content": [
              {
                "text": "And Berlin?",
                "type": "text",
              },
            ],
            "role": "user",
          },
        ]
      `);
      expect(report.toolTraffic).toBe('pruned');
      expect(report.removed.filter((removal) => removal.reason === 'tool-traffic-pruned')).toEqual([
        { sequence: 2, reason: 'tool-traffic-pruned', tokens: 13, toolCallId: 'c1' },
        { sequence: 4, reason: 'tool-traffic-pruned', tokens: 13, toolCallId: 'c2' },
      ]);
    });

    it('should remove an approval request and response with their call', () => {
      const { segments } = pruneContext({
        segments: segmentsOf(approvalTurn),
        measure,
        messageBudget: 10,
        policy: policy({ toolTrafficTurns: 1 }),
      });
      expect(renderSegments(segments)).toMatchInlineSnapshot(`
        [
          {
            "content": [
              {
                "text": "Delete /tmp",
                "type": "text",
              },
            ],
            "role": "user",
          },
          {
            "content": [
              {
                "text": "Deleted.",
                "type": "text",
              },
            ],
            "role": "assistant",
          },
          {
            "content": [
              {
                "text": "Thanks",
                "type": "text",
              },
            ],
            "role": "user",
          },
          {
            "content": [
              {
                "text": "You are welcome.",
                "type": "text",
              },
            ],
            "role": "assistant",
          },
          {
            "content": [
              {
                "text": "Bye",
                "type": "text",
              },
            ],
            "role": "user",
          },
        ]
      `);
    });

    it('should keep tool traffic while the context fits with when-over-budget, and always prune it with outside-newest-turns', () => {
      expect(
        pruneContext({
          segments: segmentsOf(threeWeatherTurns),
          measure,
          messageBudget: 10_000,
          policy: policy({ reasoning: 'none' }),
        }).report.toolTraffic,
      ).toBe('kept');
      expect(
        pruneContext({
          segments: segmentsOf(threeWeatherTurns),
          measure,
          messageBudget: 10_000,
          policy: policy({ reasoning: 'none', toolTraffic: 'outside-newest-turns' }),
        }).report.toolTraffic,
      ).toBe('pruned');
    });

    it('should drop reasoning that led only to pruned tool calls, even where reasoning is kept', () => {
      const { segments } = pruneContext({
        segments: segmentsOf(threeWeatherTurns),
        measure,
        messageBudget: 10,
        policy: policy({ reasoning: 'none', toolTraffic: 'outside-newest-turns', toolTrafficTurns: 1 }),
      });
      const assistantContent = renderSegments(segments)
        .filter((message) => message.role === 'assistant')
        .map((message) => message.content);
      expect(assistantContent).toEqual([
        [{ type: 'text', text: 'Paris is 18C.' }],
        [{ type: 'text', text: 'Rome is 21C.' }],
        [{ type: 'text', text: 'Oslo is 3C.' }],
      ]);
    });
  });

  describe('emptyMessages', () => {
    it('should remove empty messages but never the current input', () => {
      const input = segmentsOf([
        user('u1', 'hi'),
        { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: '' }] },
        { id: 'u2', role: 'user', parts: [{ type: 'data-x', data: 1 }] },
      ]);
      const { segments, report } = pruneContext({ segments: input, measure, messageBudget: 10_000, policy: policy() });
      expect(renderSegments(segments)).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: '' }] },
        { role: 'user', content: [] },
      ]);
      expect(report.removed).toEqual([]);
      const empty = segmentsOf([
        user('u1', 'hi'),
        { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'x' }] },
        { id: 'u2', role: 'user', parts: [{ type: 'data-x', data: 1 }] },
        user('u3', 'last'),
      ]);
      expect(
        renderSegments(
          pruneContext({ segments: empty, measure, messageBudget: 10_000, policy: policy() }).segments,
        ).map((message) => message.content),
      ).toEqual([[{ type: 'text', text: 'hi' }], [{ type: 'text', text: 'x' }], [{ type: 'text', text: 'last' }]]);
    });
  });

  it('should be idempotent: pruning its own output changes nothing', () => {
    for (const [messages, budget] of [
      [threeWeatherTurns, 10],
      [threeWeatherTurns, 10_000],
      [approvalTurn, 10],
    ] as const) {
      const once = pruneContext({
        segments: segmentsOf([...messages]),
        measure,
        messageBudget: budget,
        policy: policy(),
      });
      const twice = pruneContext({ segments: once.segments, measure, messageBudget: budget, policy: policy() });
      expect(twice.segments).toEqual(once.segments);
      expect(twice.report.removed).toEqual([]);
    }
  });
});
