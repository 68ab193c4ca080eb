import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countModelMessagesTokens } from '../../src/tokens/count-message-tokens.js';
import { estimateTokens } from '../../src/tokens/context-measure.js';
import { resolveModelProfile, type ModelProfile } from '../../src/context/index.js';
import { tokenCounter } from '../context/fixtures.js';
import { countSentTokens } from '../support/count-sent-tokens.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 500);

const profiles: ModelProfile[] = [
  resolveModelProfile({ modelId: 'gpt-4o' }),
  resolveModelProfile({ modelId: 'claude-sonnet-4-5' }),
  resolveModelProfile({ modelId: 'gemini-2.5-pro' }),
];

const snippets = [
  'Weather in Paris?',
  '你好，请帮我查一下明天北京的天气。',
  '```ts\nconst x = await fetch(url);\n```',
  'exit code 137 after 4 minutes',
  '',
  ' ',
  '{"nested": [1, 2, 3]}',
  'OK.',
];
const text = fc.array(fc.constantFrom(...snippets), { maxLength: 4 }).map((parts) => parts.join(' '));
const id = fc.constantFrom('c1', 'call_0123456789abcdef', 'ap-1', 'toolu_01ABCdef');
const providerOptions = fc.option(fc.constant({ anthropic: { signature: 'sig'.repeat(40) } }), { nil: undefined });
const withOptions = <T extends object>(part: fc.Arbitrary<T>) =>
  fc.tuple(part, providerOptions).map(([value, options]) => (options ? { ...value, providerOptions: options } : value));
const json: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 }).map((value) => value ?? null);
const textBytes = text.map((value) => Buffer.from(value || 'x'));

const fileData = fc.oneof(
  fc.constant(new URL('https://example.com/a')),
  textBytes.map((bytes) => new Uint8Array(bytes)),
  textBytes.map((bytes) => bytes.toString('base64')),
  textBytes.map((bytes) => new URL(`data:text/plain;base64,${bytes.toString('base64')}`)),
  textBytes.map((bytes) => ({ type: 'data' as const, data: new Uint8Array(bytes) })),
  textBytes.map((bytes) => ({
    type: 'url' as const,
    url: new URL(`data:text/plain,${encodeURIComponent(String(bytes))}`),
  })),
  text.map((value) => ({ type: 'text' as const, text: value })),
  fc.constant({ type: 'reference' as const, reference: { openai: 'file-123' } }),
);
const mediaType = fc.constantFrom('text/plain', 'application/json', 'image/png', 'application/pdf', 'audio/wav');
const filePart = withOptions(
  fc.record(
    { type: fc.constant('file' as const), mediaType, data: fileData, filename: fc.constant('notes.txt') },
    { requiredKeys: ['type', 'mediaType', 'data'] },
  ),
);
const textPart = withOptions(fc.record({ type: fc.constant('text' as const), text }));
const reasoningPart = withOptions(fc.record({ type: fc.constant('reasoning' as const), text }));
const reasoningFilePart = fc.record({
  type: fc.constant('reasoning-file' as const),
  mediaType: fc.constantFrom('image/png', 'text/plain'),
  data: fileData,
});
const customPart = fc.record({ type: fc.constant('custom' as const), kind: fc.constantFrom('openai.compaction') });
const toolCall = withOptions(
  fc.record(
    {
      type: fc.constant('tool-call' as const),
      toolCallId: id,
      toolName: fc.constantFrom('weather', 'web_search', 'readFile'),
      input: json,
      providerExecuted: fc.boolean(),
    },
    { requiredKeys: ['type', 'toolCallId', 'toolName', 'input'] },
  ),
);
const output = fc.oneof(
  text.map((value) => ({ type: 'text' as const, value })),
  json.map((value) => ({ type: 'json' as const, value })),
  text.map((value) => ({ type: 'error-text' as const, value })),
  json.map((value) => ({ type: 'error-json' as const, value })),
  fc.record({ type: fc.constant('execution-denied' as const), reason: text }, { requiredKeys: ['type'] }),
  fc
    .array(
      fc.oneof(
        text.map((value) => ({ type: 'text' as const, text: value })),
        fc.record({ type: fc.constant('file' as const), mediaType, data: fileData }),
        fc.constant({ type: 'image-url' as const, url: 'https://example.com/a.png' }),
        fc.constant({ type: 'file-id' as const, fileId: 'file-123' }),
      ),
      { maxLength: 3 },
    )
    .map((value) => ({ type: 'content' as const, value })),
);
const toolResult = withOptions(
  fc.record({
    type: fc.constant('tool-result' as const),
    toolCallId: id,
    toolName: fc.constantFrom('weather', 'web_search'),
    output,
  }),
);
const approvalRequest = fc.record(
  {
    type: fc.constant('tool-approval-request' as const),
    approvalId: id,
    toolCallId: id,
    reason: text,
    isAutomatic: fc.boolean(),
    signature: fc.constant('hmac-0123456789abcdef'),
    inputSchemaInput: json,
  },
  { requiredKeys: ['type', 'approvalId', 'toolCallId'] },
);
const approvalResponse = fc.record(
  {
    type: fc.constant('tool-approval-response' as const),
    approvalId: id,
    approved: fc.boolean(),
    reason: text,
    providerExecuted: fc.boolean(),
  },
  { requiredKeys: ['type', 'approvalId', 'approved'] },
);
const message = fc.oneof(
  text.map((content) => ({ role: 'system' as const, content })),
  fc.oneof(text, fc.array(fc.oneof(textPart, filePart), { maxLength: 4 })).map((content) => ({
    role: 'user' as const,
    content,
  })),
  fc
    .oneof(
      text,
      fc.array(
        fc.oneof(
          textPart,
          reasoningPart,
          filePart,
          reasoningFilePart,
          customPart,
          toolCall,
          toolResult,
          approvalRequest,
        ),
        { maxLength: 6 },
      ),
    )
    .map((content) => ({ role: 'assistant' as const, content })),
  fc
    .array(fc.oneof(toolResult, approvalResponse), { maxLength: 4 })
    .map((content) => ({ role: 'tool' as const, content })),
);

describe('countModelMessagesTokens', () => {
  it('should never estimate below an independent count of the messages as sent, for every part type', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.constantFrom(...profiles), (messages, profile) => {
        const estimated = estimateTokens(countModelMessagesTokens(messages as never, tokenCounter), profile);
        expect(estimated).toBeGreaterThanOrEqual(countSentTokens(messages, profile));
      }),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['an approval request', { type: 'tool-approval-request', approvalId: 'ap-1', toolCallId: 'c1' }, 'assistant'],
    ['an approval response', { type: 'tool-approval-response', approvalId: 'ap-1', approved: true }, 'tool'],
    [
      'a denial without a reason',
      { type: 'tool-result', toolCallId: 'c1', toolName: 'deploy', output: { type: 'execution-denied' } },
      'tool',
    ],
    [
      'an error result',
      { type: 'tool-result', toolCallId: 'c1', toolName: 'deploy', output: { type: 'error-text', value: 'timeout' } },
      'tool',
    ],
    [
      'an inline text file',
      {
        type: 'file',
        mediaType: 'text/plain',
        data: new Uint8Array(
          Buffer.from('2024-05-01T10:00:00Z ERROR worker 7: connection reset by peer\n'.repeat(1000)),
        ),
      },
      'user',
    ],
  ])('should count %s at least as sent', (_name, part, role) => {
    const profile = profiles[0]!;
    const messages = [{ role, content: [part] }];
    expect(estimateTokens(countModelMessagesTokens(messages as never, tokenCounter), profile)).toBeGreaterThanOrEqual(
      countSentTokens(messages, profile),
    );
  });
});
