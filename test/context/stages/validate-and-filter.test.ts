import { describe, expect, it } from 'vitest';
import { convertUIMessageToModelMessages } from '../../../src/context/index.js';
import { filterStoredMessages } from '../../../src/context/stages/filter-stored-messages.js';
import { validateStoredMessages } from '../../../src/context/stages/validate-stored-messages.js';
import type { ContextMessage } from '../../../src/model/context-store.js';
import { assistant, stepStart, stored, text, toolResult, user } from '../fixtures.js';

const legacyToolInvocation = stored(
  2,
  assistant('a1', {
    type: 'tool-invocation',
    toolInvocation: {
      state: 'result',
      toolCallId: 'c1',
      toolName: 'weather',
      args: { city: 'Oslo' },
      result: { tempC: 3 },
    },
  }),
  { tokenCount: 40, tokenCounterId: 'x' },
);
const rawInputError = stored(
  3,
  assistant('a2', {
    type: 'tool-search',
    toolCallId: 'c2',
    state: 'output-error',
    rawInput: '{"q":',
    errorText: 'bad json',
  }),
);
const v4File = stored(4, {
  id: 'u2',
  role: 'user',
  parts: [{ type: 'file', mimeType: 'image/png', data: 'iVBORw0KGgo=' }],
});
const badParts = stored(
  5,
  assistant(
    'a3',
    text('fine'),
    { type: 'text', text: 42 } as never,
    { type: 'file', mediaType: 'image/png', url: 'not a url' },
    'nonsense' as never,
  ),
);
const badRole = stored(6, { id: 'x', role: 'robot', parts: [] } as never, { tokenCount: 12 });

describe('validateStoredMessages', () => {
  it('should migrate old part shapes, drop malformed parts and messages, and report each', () => {
    const { messages, report } = validateStoredMessages({
      messages: [stored(1, user('u1', 'hi')), legacyToolInvocation, rawInputError, v4File, badParts, badRole],
    });
    expect(messages.map((message) => message.message.parts)).toEqual([
      [{ type: 'text', text: 'hi' }],
      [
        {
          type: 'tool-weather',
          toolCallId: 'c1',
          state: 'output-available',
          input: { city: 'Oslo' },
          output: { tempC: 3 },
        },
      ],
      [{ type: 'tool-search', toolCallId: 'c2', state: 'output-error', input: '{"q":', errorText: 'bad json' }],
      [{ type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=' }],
      [{ type: 'text', text: 'fine' }],
    ]);
    expect(report).toEqual({
      stage: 'validate',
      removed: [
        { sequence: 5, reason: 'part-invalid', tokens: 0, detail: 'parts[1]: text.text is not a string' },
        { sequence: 5, reason: 'part-invalid', tokens: 0, detail: 'parts[2]: file.url "not a url" is not a URL' },
        { sequence: 5, reason: 'part-invalid', tokens: 0, detail: 'parts[3]: not an object' },
        {
          sequence: 6,
          reason: 'message-invalid',
          tokens: 12,
          detail: 'message.role "robot" is not system, user or assistant',
        },
      ],
      migrated: [
        { sequence: 2, migration: 'tool-invocation-to-tool-part' },
        { sequence: 3, migration: 'raw-input-to-input' },
        { sequence: 4, migration: 'file-data-to-url' },
      ],
      tokensSaved: 12,
    });
  });

  it('should drop the stored count of a changed message so it is recounted', () => {
    const { messages } = validateStoredMessages({ messages: [legacyToolInvocation] });
    expect(messages[0]).toMatchObject({ tokenCount: null, tokenCounterId: null });
  });

  it('should be idempotent and keep valid messages as the same objects', () => {
    const input = [stored(1, user('u1', 'hi')), legacyToolInvocation, rawInputError, v4File, badParts, badRole];
    const once = validateStoredMessages({ messages: input }).messages;
    const twice = validateStoredMessages({ messages: once });
    expect(twice.messages).toEqual(once);
    expect(twice.messages.every((message, index) => message === once[index])).toBe(true);
    expect(twice.report.removed).toEqual([]);
  });
});

const history: ContextMessage[] = [
  stored(1, user('u1', 'Delete the old files')),
  stored(
    2,
    assistant('a1', {
      type: 'tool-delete',
      toolCallId: 'c-old',
      state: 'approval-responded',
      input: { path: '/tmp' },
      approval: { id: 'ap-old', approved: true },
    }),
  ),
  stored(
    3,
    assistant('a2', {
      type: 'tool-delete',
      toolCallId: 'c-denied',
      state: 'approval-responded',
      input: { path: '/etc' },
      approval: { id: 'ap-denied', approved: false, reason: 'too risky' },
    }),
  ),
  stored(
    4,
    assistant('a3', text('Searching'), {
      type: 'tool-search',
      toolCallId: 'c-cut',
      state: 'input-available',
      input: { q: 'x' },
    }),
    { status: 'cancelled' },
  ),
  stored(
    5,
    assistant('a4', {
      type: 'tool-search',
      toolCallId: 'c-ask',
      state: 'approval-requested',
      input: { q: 'y' },
      approval: { id: 'ap-ask' },
    }),
  ),
  stored(6, user('u-deleted', 'gone'), { deletedAt: new Date('2025-01-01') }),
  stored(7, user('u-excluded', 'excluded'), { contextState: 'excluded', tokenCount: 9 }),
  stored(8, user('u-redacted', ''), { contextState: 'redacted' }),
  stored(9, { id: 's1', role: 'system', parts: [text('You are a pirate')] }),
  stored(10, assistant('a-streaming', text('half')), { status: 'streaming' }),
  stored(11, user('u2', 'Now clean /var')),
  stored(
    12,
    assistant('a5', toolResult('search', 'c-prelim', {}, { partial: true }), {
      type: 'tool-delete',
      toolCallId: 'c-pending',
      state: 'approval-responded',
      input: { path: '/var' },
      approval: { id: 'ap-new', approved: true },
    }),
  ),
];
// c-prelim is preliminary:
(history[11]!.message.parts[0] as Record<string, unknown>).preliminary = true;

describe('filterStoredMessages', () => {
  it('should leave out deleted, excluded, redacted, system and unfinished messages, and close dead tool calls with error results', () => {
    const { messages, report } = filterStoredMessages({ messages: history });
    expect(messages.map((message) => message.sequence)).toEqual([1, 2, 3, 4, 5, 11, 12]);
    expect(messages.map((message) => message.message.parts)).toMatchInlineSnapshot(`
      [
        [
          {
            "text": "Delete the old files",
            "type": "text",
          },
        ],
        [
          {
            "errorText": "The tool call was approved but never run: the conversation moved on first.",
            "input": {
              "path": "/tmp",
            },
            "state": "output-error",
            "toolCallId": "c-old",
            "type": "tool-delete",
          },
        ],
        [
          {
            "approval": {
              "approved": false,
              "id": "ap-denied",
              "reason": "too risky",
            },
            "input": {
              "path": "/etc",
            },
            "state": "approval-responded",
            "toolCallId": "c-denied",
            "type": "tool-delete",
          },
        ],
        [
          {
            "text": "Searching",
            "type": "text",
          },
          {
            "errorText": "The tool call did not complete: the response was cancelled before the result arrived.",
            "input": {
              "q": "x",
            },
            "state": "output-error",
            "toolCallId": "c-cut",
            "type": "tool-search",
          },
        ],
        [
          {
            "errorText": "The tool call was not run: approval was requested but never given.",
            "input": {
              "q": "y",
            },
            "state": "output-error",
            "toolCallId": "c-ask",
            "type": "tool-search",
          },
        ],
        [
          {
            "text": "Now clean /var",
            "type": "text",
          },
        ],
        [
          {
            "errorText": "The tool call did not complete: only a preliminary result was recorded.",
            "input": {},
            "state": "output-error",
            "toolCallId": "c-prelim",
            "type": "tool-search",
          },
          {
            "approval": {
              "approved": true,
              "id": "ap-new",
            },
            "input": {
              "path": "/var",
            },
            "state": "approval-responded",
            "toolCallId": "c-pending",
            "type": "tool-delete",
          },
        ],
      ]
    `);
    expect(report).toEqual({
      stage: 'filter',
      removed: [
        { sequence: 6, reason: 'message-deleted', tokens: 0 },
        { sequence: 7, reason: 'message-excluded', tokens: 9 },
        { sequence: 8, reason: 'message-redacted', tokens: 0 },
        { sequence: 9, reason: 'message-system', tokens: 0 },
        { sequence: 10, reason: 'message-unfinished', tokens: 0 },
      ],
      closedToolCalls: [
        { sequence: 2, toolCallId: 'c-old', previousState: 'approval-responded' },
        { sequence: 4, toolCallId: 'c-cut', previousState: 'input-available' },
        { sequence: 5, toolCallId: 'c-ask', previousState: 'approval-requested' },
        { sequence: 12, toolCallId: 'c-prelim', previousState: 'output-available' },
      ],
      tokensSaved: 9,
    });
  });

  it('should keep an answered approval after the newest user message (unfinished tool work) as it is', () => {
    const { messages } = filterStoredMessages({ messages: history });
    expect(messages.at(-1)!.message.parts[1]).toBe(history[11]!.message.parts[1]);
  });

  it('should take assistant statuses from the option', () => {
    const { messages } = filterStoredMessages({ messages: history, assistantStatuses: ['completed', 'streaming'] });
    expect(messages.map((message) => message.sequence)).toEqual([1, 2, 3, 5, 10, 11, 12]);
  });

  it('should be idempotent', () => {
    const once = filterStoredMessages({ messages: history }).messages;
    const twice = filterStoredMessages({ messages: once });
    expect(twice.messages).toEqual(once);
    expect(twice.report.removed).toEqual([]);
    expect(twice.report.closedToolCalls).toEqual([]);
  });
});

describe('filterStoredMessages > pending approvals', () => {
  const pending = {
    type: 'tool-deploy',
    toolCallId: 'c-wait',
    state: 'approval-requested',
    input: { target: 'prod' },
    approval: { id: 'ap-wait' },
  };
  const waiting: ContextMessage[] = [
    stored(1, user('u1', 'Deploy to prod')),
    stored(2, assistant('a1', stepStart, text('I need your approval.'), pending)),
  ];

  it('should keep an approval still awaiting its answer in the newest turn as it is', () => {
    const { messages, report } = filterStoredMessages({ messages: waiting });
    expect(messages[1]!.message.parts[2]).toBe(pending);
    expect(report.closedToolCalls).toEqual([]);
  });

  it('should convert it like the AI SDK: the call and the approval request, no invented result', async () => {
    const { convertToModelMessages } = await import('ai');
    const { messages } = filterStoredMessages({ messages: waiting });
    const ours = messages.flatMap((row) => convertUIMessageToModelMessages(row.message));
    expect(ours).toEqual(await convertToModelMessages(waiting.map((row) => row.message) as never));
  });

  it('should close it once a newer user message supersedes it', () => {
    const { messages, report } = filterStoredMessages({
      messages: [...waiting, stored(3, user('u2', 'Never mind, what time is it?'))],
    });
    expect(messages[1]!.message.parts[2]).toMatchObject({ state: 'output-error', toolCallId: 'c-wait' });
    expect(report.closedToolCalls).toEqual([
      { sequence: 2, toolCallId: 'c-wait', previousState: 'approval-requested' },
    ]);
  });
});
