import { convertToModelMessages, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { convertUIMessageToModelMessages } from '../../src/context/index.js';
import { InvalidMessageError } from '../../src/errors/invalid-message-error.js';
import type { ContextUIMessage } from '../../src/model/context-ui-message.js';

const multiStepTurn: ContextUIMessage = {
  id: 'a1',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    { type: 'reasoning', text: 'need weather', providerMetadata: { openai: { itemId: 'rs_1' } } },
    {
      type: 'tool-weather',
      toolCallId: 'call-1',
      state: 'output-available',
      input: { city: 'Rome' },
      output: { tempC: 18 },
    },
    { type: 'step-start' },
    { type: 'text', text: 'Rome: 18C.' },
    { type: 'source-url', sourceId: 's1', url: 'https://example.com' },
  ],
};

const everyToolState: ContextUIMessage = {
  id: 'a2',
  role: 'assistant',
  parts: [
    { type: 'tool-search', toolCallId: 'c-text', state: 'output-available', input: { q: 'x' }, output: 'plain text' },
    { type: 'tool-search', toolCallId: 'c-error', state: 'output-error', input: { q: 'y' }, errorText: 'timeout' },
    {
      type: 'tool-delete',
      toolCallId: 'c-denied',
      state: 'output-denied',
      input: { id: 1 },
      approval: { id: 'ap-1', approved: false, reason: 'no' },
    },
    {
      type: 'tool-delete',
      toolCallId: 'c-responded',
      state: 'approval-responded',
      input: { id: 2 },
      approval: { id: 'ap-2', approved: false, reason: 'not now' },
    },
    {
      type: 'tool-delete',
      toolCallId: 'c-approved',
      state: 'approval-responded',
      input: { id: 3 },
      approval: { id: 'ap-3', approved: true },
    },
    {
      type: 'dynamic-tool',
      toolName: 'legacy',
      toolCallId: 'c-gone',
      state: 'output-available',
      input: {},
      output: { big: true },
      dynamic: false,
    },
    { type: 'tool-search', toolCallId: 'c-streaming', state: 'input-streaming', input: { q: 'partial' } },
    {
      type: 'tool-web',
      toolCallId: 'c-provider',
      state: 'output-available',
      input: { q: 'z' },
      output: { hits: 2 },
      providerExecuted: true,
    },
    { type: 'text', text: 'done' },
  ],
};

const userWithFile: ContextUIMessage = {
  id: 'u1',
  role: 'user',
  parts: [
    { type: 'text', text: 'Look at this' },
    { type: 'file', mediaType: 'image/png', filename: 'a.png', url: 'https://example.com/a.png' },
    { type: 'data-note', data: { secret: true } },
  ],
};

const withSteering: ContextUIMessage = {
  id: 'a3',
  role: 'assistant',
  parts: [
    { type: 'text', text: 'working' },
    { type: 'steering-message', id: 'st1', parts: [{ type: 'text', text: 'also check Paris' }] },
    { type: 'step-start' },
    { type: 'text', text: 'ok' },
  ],
};

describe('convertUIMessageToModelMessages', () => {
  it.each([
    ['a multi-step turn with reasoning, a tool and a source', multiStepTurn],
    ['every terminal tool state, an unavailable tool, a streaming call and a provider-executed tool', everyToolState],
    ['a user message with a file and a data part', userWithFile],
    ['a steering message between steps', withSteering],
  ])('should convert %s exactly as the AI SDK does', async (_name, message) => {
    const expected = await convertToModelMessages([message as unknown as UIMessage]);
    expect(convertUIMessageToModelMessages(message)).toEqual(expected);
  });

  it('should split a multi-step turn into assistant, tool and assistant messages', () => {
    expect(convertUIMessageToModelMessages(multiStepTurn)).toMatchInlineSnapshot(`
      [
        {
          "content": [
            {
              "providerOptions": {
                "openai": {
                  "itemId": "rs_1",
                },
              },
              "text": "need weather",
              "type": "reasoning",
            },
            {
              "input": {
                "city": "Rome",
              },
              "toolCallId": "call-1",
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
                  "tempC": 18,
                },
              },
              "toolCallId": "call-1",
              "toolName": "weather",
              "type": "tool-result",
            },
          ],
          "role": "tool",
        },
        {
          "content": [
            {
              "text": "Rome: 18C.",
              "type": "text",
            },
          ],
          "role": "assistant",
        },
      ]
    `);
  });

  it('should use convertToolOutput for the model output when it returns one', () => {
    const messages = convertUIMessageToModelMessages(multiStepTurn, {
      convertToolOutput: ({ output }) => ({ type: 'text', value: `temp ${(output as { tempC: number }).tempC}` }),
    });
    expect(messages[1]).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call-1', toolName: 'weather', output: { type: 'text', value: 'temp 18' } },
      ],
    });
  });

  it('should throw InvalidMessageError naming a role that is not system, user or assistant, as the AI SDK throws', async () => {
    const message = { id: 'x1', role: 'tool', parts: [{ type: 'text', text: 'hi' }] } as unknown as ContextUIMessage;
    await expect(convertToModelMessages([message as unknown as UIMessage])).rejects.toThrow('Unsupported role: tool');
    expect(() => convertUIMessageToModelMessages(message)).toThrow(InvalidMessageError);
    expect(() => convertUIMessageToModelMessages(message)).toThrow(
      'Invalid message role "tool": expected system, user or assistant',
    );
  });
});
