// `modelPartKinds` tells, without converting, which stored per-part count belongs to a part the pruning keeps. The
// context engine adds the text counts of the turns a window leaves out to its estimate, so a kind out of step with
// the conversion would let a window decide otherwise than the whole thread: the kinds must be exactly those of
// `convertUIMessageToModelMessages`, part for part, on every part type and tool state.
import fc from 'fast-check';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { convertUIMessageToModelMessages } from '../../src/context/index.js';
import type { ContextUIMessage } from '../../src/model/context-ui-message.js';
import { modelPartKinds, type ModelPartKind } from '../../src/tokens/model-part-kinds.js';
import { generateConversation } from '../support/agent-conversations.js';

function convertedKinds(message: ContextUIMessage): ModelPartKind[] {
  const kinds: ModelPartKind[] = [];
  for (const model of convertUIMessageToModelMessages(message) as ModelMessage[]) {
    if (typeof model.content === 'string') kinds.push('text');
    else
      for (const part of model.content)
        kinds.push(
          part.type === 'text'
            ? 'text'
            : part.type === 'reasoning' || part.type === 'reasoning-file'
              ? 'reasoning'
              : part.type.startsWith('tool-')
                ? 'tool'
                : 'other',
        );
  }
  return kinds;
}

const toolStates = [
  'input-streaming',
  'input-available',
  'approval-requested',
  'approval-responded',
  'output-available',
  'output-error',
  'output-denied',
];

const toolPart = fc
  .record({
    dynamic: fc.boolean(),
    state: fc.constantFrom(...toolStates),
    providerExecuted: fc.constantFrom(undefined, true, false),
    approval: fc.constantFrom(
      undefined,
      null,
      { id: 'ap' },
      { id: 'ap', approved: true },
      { id: 'ap', approved: false },
    ),
  })
  .map(({ dynamic, state, providerExecuted, approval }) => ({
    ...(dynamic ? { type: 'dynamic-tool', toolName: 'lookup' } : { type: 'tool-lookup' }),
    toolCallId: 'call',
    state,
    input: { q: 'x' },
    ...(state === 'output-available' ? { output: { ok: true } } : {}),
    ...(state === 'output-error' ? { errorText: 'failed' } : {}),
    ...(providerExecuted !== undefined ? { providerExecuted } : {}),
    ...(approval !== undefined ? { approval } : {}),
  }));

const assistantPart = fc.oneof(
  toolPart,
  fc.constantFrom<Record<string, unknown>>(
    { type: 'step-start' },
    { type: 'text', text: 'Done.' },
    { type: 'reasoning', text: 'Thinking.' },
    { type: 'reasoning-file', mediaType: 'image/png', url: 'https://example.com/r.png' },
    { type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png' },
    { type: 'custom', kind: 'marker' },
    { type: 'source-url', sourceId: 's', url: 'https://example.com' },
    { type: 'data-progress', data: { done: 1 } },
    {
      type: 'steering-message',
      parts: [
        { type: 'text', text: 'Also this.' },
        { type: 'file', mediaType: 'text/plain', url: 'https://example.com/a.txt' },
      ],
    },
  ),
);

const userPart = fc.constantFrom<Record<string, unknown>>(
  { type: 'text', text: 'Hello.' },
  { type: 'file', mediaType: 'application/pdf', url: 'https://example.com/r.pdf' },
  { type: 'data-note', data: 'x' },
);

describe('modelPartKinds', () => {
  it('should give each part of the converted messages its kind, in order, for any assistant or user message', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(assistantPart, { maxLength: 12 }).map((parts) => ({ id: 'a', role: 'assistant', parts })),
          fc.array(userPart, { maxLength: 4 }).map((parts) => ({ id: 'u', role: 'user', parts })),
        ),
        (message) => {
          const typed = message as ContextUIMessage;
          expect(modelPartKinds(typed)).toEqual(convertedKinds(typed));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('should match the conversion on every message of generated agent conversations', () => {
    for (let seed = 1; seed <= 40; seed++)
      for (const row of generateConversation(seed, { maxMessages: 200 }).rows)
        expect(modelPartKinds(row.message)).toEqual(convertedKinds(row.message));
  });
});
