import { convertToModelMessages, jsonSchema, tool, type JSONValue, type ToolSet, type UIMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolModelOutputs } from '../../src/ai-sdk/context-manager/tool-model-outputs.js';
import { ContextEmptyError } from '../../src/context/contracts/context-empty-error.js';
import { loadContextSegments } from '../../src/context/engine/load-context-segments.js';
import type { ContextMessage, LoadedContext } from '../../src/model/context-store.js';
import type { ContextUIMessage, ContextUIPart } from '../../src/model/context-ui-message.js';
import { CURRENT_MESSAGE_SCHEMA_VERSION } from '../../src/model/message-shape-migrations.js';
import { createContextMeasure } from '../../src/tokens/context-measure.js';
import { resolveModelProfile } from '../../src/tokens/model-profile.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';

// The AI SDK warns on every deprecated `rawInput` it converts; the generator makes many.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const CASES = 5000;

// Counting does not change what is sent: a cheap counter keeps thousands of cases fast.
const tokenCounter: TokenCounter = { id: 'characters', count: (text) => text.length };
const measure = createContextMeasure({
  tokenCounter,
  profile: resolveModelProfile({ modelId: 'gpt-4o', overrides: { contextWindow: 10_000_000 } }),
});

const inputSchema = jsonSchema<unknown>({ type: 'object' });
/** `weather` has no `toModelOutput`, `search` a sync one, `web` (provider-executed) an async one; `legacy` is gone. */
const tools: ToolSet = {
  weather: tool({ inputSchema }),
  search: tool({
    inputSchema,
    toModelOutput: ({ toolCallId, output }) => ({
      type: 'text',
      value: `${toolCallId} found ${JSON.stringify(output)}`,
    }),
  }),
  web: tool({
    inputSchema,
    toModelOutput: async ({ input, output }) => ({
      type: 'json' as const,
      value: { asked: (input ?? null) as JSONValue, hits: (output ?? null) as JSONValue },
    }),
  }),
};
const TOOL_NAMES = ['weather', 'search', 'web', 'legacy'] as const;

const convertDataPart = (part: { type: string; data?: unknown }) =>
  part.type === 'data-note' ? { type: 'text' as const, text: `note: ${JSON.stringify(part.data)}` } : undefined;

// ---- generators ---------------------------------------------------------------------------------------------

const word = fc.string({ maxLength: 6 });
const value = fc.oneof(
  word,
  fc.integer(),
  fc.constant(null),
  fc.record({ city: word, tempC: fc.integer({ min: -30, max: 45 }) }),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const providerMetadata = fc.constantFrom({ openai: { itemId: 'item_1' } }, { anthropic: { cacheControl: 'x' } });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
/** Drops the keys whose value is undefined, as a stored (JSON) message has none. */
const defined = <T extends object>(object: T): T =>
  Object.fromEntries(Object.entries(object).filter(([, entry]) => entry !== undefined)) as T;

const textPart = fc
  .record({ text: word, providerMetadata: optional(providerMetadata), state: optional(fc.constant('done' as const)) })
  .map((part) => defined({ type: 'text', ...part }));
const reasoningPart = fc
  .record({ text: word, providerMetadata: optional(providerMetadata) })
  .map((part) => defined({ type: 'reasoning', ...part }));
const filePart = fc
  .record({
    mediaType: fc.constantFrom('image/png', 'application/pdf', 'text/plain'),
    url: fc.constantFrom('https://example.com/a.png', 'data:text/plain;base64,aGVsbG8='),
    filename: optional(fc.constantFrom('a.png', 'notes.txt')),
    providerMetadata: optional(providerMetadata),
  })
  .map((part) => defined({ type: 'file', ...part }));
const sourceUrlPart = fc
  .record({ sourceId: word, url: fc.constant('https://example.com/page'), title: optional(word) })
  .map((part) => defined({ type: 'source-url', ...part }));
const sourceDocumentPart = fc
  .record({ sourceId: word, title: word, filename: optional(word) })
  .map((part) => defined({ type: 'source-document', mediaType: 'application/pdf', ...part }));
const dataPart = fc
  .record({ name: fc.constantFrom('note', 'progress'), id: optional(word), data: value })
  .map(({ name, ...part }) => defined({ type: `data-${name}`, ...part }));

const requestedApproval = fc
  .record({
    id: fc.constantFrom('approval_0', 'approval_1'),
    isAutomatic: optional(fc.boolean()),
    requestReason: optional(word),
    signature: optional(word),
  })
  .map(defined);
const answeredApproval = (approved: fc.Arbitrary<boolean>) =>
  fc
    .record({ request: requestedApproval, approved, reason: optional(word) })
    .map(({ request, ...answer }) => defined({ ...request, ...answer }));

/** One tool call in one of the states of v7, with the fields that state may carry. */
const toolState = fc.oneof(
  fc.record({ state: fc.constant('input-streaming'), input: optional(value) }),
  fc.record({ state: fc.constant('input-available'), input: value }),
  fc.record({ state: fc.constant('approval-requested'), input: value, approval: requestedApproval }),
  fc.record({ state: fc.constant('approval-responded'), input: value, approval: answeredApproval(fc.boolean()) }),
  // Weighted up: finished calls are the most common in real threads, and the only ones toModelOutput converts.
  {
    weight: 3,
    arbitrary: fc.record({
      state: fc.constant('output-available'),
      input: value,
      output: value,
      preliminary: optional(fc.boolean()),
      approval: optional(answeredApproval(fc.constant(true))),
      resultProviderMetadata: optional(providerMetadata),
    }),
  },
  fc.oneof(
    fc.record({ state: fc.constant('output-error'), input: value, errorText: word }),
    fc.record({ state: fc.constant('output-error'), input: fc.constant(undefined), rawInput: value, errorText: word }),
  ),
  fc.record({ state: fc.constant('output-denied'), input: value, approval: answeredApproval(fc.constant(false)) }),
);
const toolPart = fc
  .record({
    name: fc.constantFrom(...TOOL_NAMES),
    kind: fc.constantFrom('static', 'dynamic', 'unavailable'),
    toolCallId: fc.constantFrom('call_0', 'call_1', 'call_2'),
    providerExecuted: optional(fc.boolean()),
    callProviderMetadata: optional(providerMetadata),
    title: optional(word),
    state: toolState,
  })
  .map(({ name, kind, state, ...call }) =>
    defined({
      ...(kind === 'static'
        ? { type: `tool-${name}` }
        : { type: 'dynamic-tool', toolName: name, ...(kind === 'unavailable' ? { dynamic: false } : {}) }),
      ...call,
      ...defined(state),
    }),
  );

const userMessage = fc
  .array(fc.oneof({ weight: 4, arbitrary: textPart }, filePart, dataPart), { minLength: 1, maxLength: 3 })
  .map((parts) => ({ role: 'user' as const, parts }));
const assistantMessage = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: textPart },
      reasoningPart,
      filePart,
      sourceUrlPart,
      sourceDocumentPart,
      { weight: 2, arbitrary: fc.constant({ type: 'step-start' }) },
      dataPart,
      { weight: 5, arbitrary: toolPart },
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => ({ role: 'assistant' as const, parts }));
const conversation = fc
  .array(fc.oneof(userMessage, { weight: 2, arbitrary: assistantMessage }), { minLength: 1, maxLength: 5 })
  .map((messages) =>
    messages.map((message, index) => ({ id: `message_${index}`, ...message }) as unknown as ContextUIMessage),
  );

// ---- the two sides ------------------------------------------------------------------------------------------

/** A stored row holding a copy of `message`, as the store hands it to the engine. */
function rowOf(message: ContextUIMessage, index: number): ContextMessage {
  return {
    sequence: index + 1,
    message: structuredClone(message),
    status: 'completed',
    contextState: 'eligible',
    tokenCount: null,
    tokenCounterId: null,
    deletedAt: null,
    schemaVersion: CURRENT_MESSAGE_SCHEMA_VERSION,
  };
}

/** What the engine sends for the stored conversation: stages 1 to 4 as a context manager with `tools` runs them. */
async function engineSends(messages: ContextUIMessage[], withDataParts: boolean): Promise<unknown> {
  const rows = messages.map(rowOf);
  const view: LoadedContext = { snapshot: null, latestSummary: null, tail: rows, pinned: [], currentVersion: 0 };
  const fromTools = toolModelOutputs(tools);
  await fromTools.convertLoaded(view);
  let loaded;
  try {
    loaded = loadContextSegments({
      view,
      measure,
      policy: { assistantStatuses: ['completed', 'cancelled', 'failed'] },
      convertToolOutput: fromTools.converter(undefined),
      convertDataPart: withDataParts ? (part: ContextUIPart) => convertDataPart(part) : undefined,
      availableTools: Object.keys(tools),
    });
  } catch (error) {
    // Nothing left to send: the engine says so with an error where `convertToModelMessages` returns [].
    if (error instanceof ContextEmptyError) return [];
    throw error;
  }
  return asSent(loaded.segments.flatMap((segment) => (segment.kind === 'message' ? segment.messages : [])));
}

/** What `convertToModelMessages` sends once the engine's documented rules are applied to its input. */
async function aiSdkSends(messages: ContextUIMessage[], withDataParts: boolean): Promise<unknown> {
  return asSent(
    await convertToModelMessages(withEngineRules(messages) as unknown as UIMessage[], {
      tools,
      ...(withDataParts ? { convertDataPart } : {}),
    }),
  );
}

/** What a provider receives: the JSON of the messages (an `undefined` key and a `URL` object as JSON has them). */
function asSent(messages: unknown): unknown {
  return JSON.parse(JSON.stringify(messages, (key, entry) => (key === 'agentHistoryRef' ? undefined : entry)));
}

/**
 * The deliberate differences (the guide's "What the model is sent, against convertToModelMessages"), written as
 * what they do to the input: every tool call that can no longer complete is closed with an error result instead
 * of being sent without one (or dropped).
 */
function withEngineRules(messages: ContextUIMessage[]): ContextUIMessage[] {
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  return messages.map((message, index) => {
    if (message.role !== 'assistant') return message;
    const superseded = index < lastUser;
    return { ...message, parts: message.parts.map((part) => closed(part, superseded)) };
  });
}

function closed(part: ContextUIPart, superseded: boolean): ContextUIPart {
  const call = part as ContextUIPart & { state?: string; input?: unknown; approval?: { approved?: boolean } };
  const asError = (errorText: string) => {
    const {
      output: _output,
      preliminary: _preliminary,
      approval: _approval,
      ...rest
    } = call as typeof call & {
      output?: unknown;
      preliminary?: unknown;
    };
    return { ...rest, state: 'output-error', input: call.input ?? null, errorText } as ContextUIPart;
  };
  if (!part.type.startsWith('tool-') && part.type !== 'dynamic-tool') return part;
  if (call.state === 'input-streaming' || call.state === 'input-available')
    return asError('The tool call did not complete: no result was recorded.');
  if (call.state === 'output-available' && (call as { preliminary?: boolean }).preliminary === true)
    return asError('The tool call did not complete: only a preliminary result was recorded.');
  if (superseded && call.state === 'approval-requested')
    return asError('The tool call was not run: approval was requested but never given.');
  if (superseded && call.state === 'approval-responded' && call.approval?.approved === true)
    return asError('The tool call was approved but never run: the conversation moved on first.');
  return part;
}

// ---- the properties -----------------------------------------------------------------------------------------

describe('the engine conversion against convertToModelMessages', () => {
  it(`should send what the AI SDK sends, apart from the documented differences (${CASES} conversations)`, async () => {
    await fc.assert(
      fc.asyncProperty(conversation, fc.boolean(), async (messages, withDataParts) => {
        expect(await engineSends(messages, withDataParts)).toStrictEqual(await aiSdkSends(messages, withDataParts));
      }),
      { numRuns: CASES },
    );
  });

  /** The result the engine and the AI SDK send for `call_0`, if any. */
  async function resultsOf(messages: ContextUIMessage[]) {
    const resultOf = (sent: unknown) =>
      (sent as Array<{ role: string; content: Array<{ type: string; toolCallId?: string; output?: unknown }> }>)
        .flatMap((message) => (message.role === 'tool' ? message.content : []))
        .find((part) => part.type === 'tool-result' && part.toolCallId === 'call_0')?.output;
    const aiSdk = asSent(await convertToModelMessages(messages as unknown as UIMessage[], { tools }));
    return { engine: resultOf(await engineSends(messages, false)), aiSdk: resultOf(aiSdk) };
  }

  const call = (state: Record<string, unknown>) =>
    ({ type: 'tool-weather', toolCallId: 'call_0', input: { city: 'Rome' }, ...state }) as ContextUIPart;
  const asked = { id: 'u0', role: 'user', parts: [{ type: 'text', text: 'Weather?' }] } as ContextUIMessage;
  const answer = (part: ContextUIPart) => ({ id: 'a0', role: 'assistant', parts: [part] }) as ContextUIMessage;
  const followUp = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Never mind' }] } as ContextUIMessage;

  it.each([
    ['a call still streaming its input', [asked, answer(call({ state: 'input-streaming' }))], undefined],
    ['a call without a result', [asked, answer(call({ state: 'input-available' }))], undefined],
    [
      'an approval request a newer user message superseded',
      [asked, answer(call({ state: 'approval-requested', approval: { id: 'approval_0' } })), followUp],
      undefined,
    ],
    [
      'an approved call a newer user message superseded before it ran',
      [asked, answer(call({ state: 'approval-responded', approval: { id: 'approval_0', approved: true } })), followUp],
      undefined,
    ],
    [
      'a preliminary output',
      [asked, answer(call({ state: 'output-available', output: 'so far 18C', preliminary: true }))],
      { type: 'text', value: 'so far 18C' },
    ],
  ])('should close %s with an error result that says why', async (_name, messages, aiSdkResult) => {
    const { engine, aiSdk } = await resultsOf(messages as ContextUIMessage[]);
    expect(engine).toMatchObject({ type: 'error-text', value: expect.stringMatching(/^The tool call (did not|was)/) });
    expect(aiSdk).toStrictEqual(aiSdkResult);
  });

  it('should leave out a system message stored in the thread, which convertToModelMessages sends', async () => {
    const system = { id: 's0', role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] } as ContextUIMessage;
    const aiSdk = asSent(await convertToModelMessages([system, asked] as unknown as UIMessage[]));
    expect(aiSdk).toStrictEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
    ]);
    expect(await engineSends([system, asked], false)).toStrictEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
    ]);
  });

  it('should set aside a stored message of unknown role, on which convertToModelMessages throws', async () => {
    const stray = { id: 'x0', role: 'tool', parts: [{ type: 'text', text: 'stray' }] } as unknown as ContextUIMessage;
    await expect(convertToModelMessages([asked, stray] as unknown as UIMessage[])).rejects.toThrow(
      'Unsupported role: tool',
    );
    expect(await engineSends([asked, stray], false)).toStrictEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
    ]);
  });

  it('should throw ContextEmptyError when nothing is left to send, where convertToModelMessages returns []', async () => {
    const sourcesOnly = {
      id: 'a0',
      role: 'assistant',
      parts: [{ type: 'source-url', sourceId: 's0', url: 'https://example.com/page' }],
    } as ContextUIMessage;
    expect(await convertToModelMessages([sourcesOnly] as unknown as UIMessage[])).toStrictEqual([]);
    const view: LoadedContext = {
      snapshot: null,
      latestSummary: null,
      pinned: [],
      tail: [rowOf(sourcesOnly, 0)],
      currentVersion: 0,
    };
    expect(() => loadContextSegments({ view, measure, policy: { assistantStatuses: ['completed'] } })).toThrow(
      ContextEmptyError,
    );
  });
});
