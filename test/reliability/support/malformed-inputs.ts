import type { TenantHistory } from '../../../src/store/create-agent-history.js';

/** What a malformed input is aimed at: a live thread with a completed message, a streaming answer and a run. */
export interface BadInputTarget {
  store: TenantHistory;
  threadId: string;
  messageId: string;
  streamingMessageId: string;
  runId: string;
  /** The store's `maxMessageBytes`. */
  maxMessageBytes: number;
}

/** One malformed input: the call, and a piece of text its error message must contain (the value, rendered). */
export interface BadInput {
  method: string;
  input: string;
  call: (target: BadInputTarget) => Promise<unknown>;
  names: string;
}

const text = (value: string) => [{ type: 'text', text: value }];
const user = (parts: unknown, extra: Record<string, unknown> = {}) =>
  ({ id: 'bad-1', role: 'user', parts, ...extra }) as never;
const deep = (depth: number): unknown => (depth === 0 ? 'leaf' : { next: deep(depth - 1) });
const LONG_ID = 'i'.repeat(201);
const SNAPSHOT = {
  expectedVersion: 0,
  throughSequence: 0,
  includedSequences: [],
  policyVersion: 'p',
  messagesHash: 'h',
};
const SUMMARY = { fromSequence: 1, throughSequence: 1, content: 'summary', tokenCount: 1, policyVersion: 'p' };

/**
 * Malformed inputs for every store method: broken parts, huge payloads, NUL bytes, lone UTF-16 surrogates,
 * non-uuid ids, negative, fractional and huge numbers, wrongly typed metadata and options, bad enums.
 */
export const MALFORMED_INPUTS: BadInput[] = [
  // appendMessage: the message
  {
    method: 'appendMessage',
    input: 'message null',
    call: (t) => t.store.appendMessage(t.threadId, null as never),
    names: 'null',
  },
  {
    method: 'appendMessage',
    input: 'message is an array',
    call: (t) => t.store.appendMessage(t.threadId, [] as never),
    names: '[]',
  },
  {
    method: 'appendMessage',
    input: 'parts a string',
    call: (t) => t.store.appendMessage(t.threadId, user('nope')),
    names: '"nope"',
  },
  {
    method: 'appendMessage',
    input: 'parts null',
    call: (t) => t.store.appendMessage(t.threadId, user(null)),
    names: 'null',
  },
  {
    method: 'appendMessage',
    input: 'no parts for a user message',
    call: (t) => t.store.appendMessage(t.threadId, user([])),
    names: '[]',
  },
  {
    method: 'appendMessage',
    input: 'a part that is a string',
    call: (t) => t.store.appendMessage(t.threadId, user(['text'])),
    names: '"text"',
  },
  {
    method: 'appendMessage',
    input: 'a part without type',
    call: (t) => t.store.appendMessage(t.threadId, user([{ text: 'x' }])),
    names: 'parts[0].type',
  },
  {
    method: 'appendMessage',
    input: 'an empty part type',
    call: (t) => t.store.appendMessage(t.threadId, user([{ type: '' }])),
    names: 'parts[0].type ""',
  },
  {
    method: 'appendMessage',
    input: 'a numeric part type',
    call: (t) => t.store.appendMessage(t.threadId, user([{ type: 42 }])),
    names: '42',
  },
  {
    method: 'appendMessage',
    input: 'a text part with a number',
    call: (t) => t.store.appendMessage(t.threadId, user([{ type: 'text', text: 42 }])),
    names: 'parts[0].text 42',
  },
  {
    method: 'appendMessage',
    input: 'a reasoning part without text',
    call: (t) => t.store.appendMessage(t.threadId, user([{ type: 'reasoning' }])),
    names: 'parts[0].text',
  },
  {
    method: 'appendMessage',
    input: 'an unknown tool part without toolCallId',
    call: (t) =>
      t.store.appendMessage(t.threadId, user([{ type: 'tool-launchMissiles', state: 'output-available', output: {} }])),
    names: 'parts[0].toolCallId',
  },
  {
    method: 'appendMessage',
    input: 'a dynamic tool part with a numeric toolCallId',
    call: (t) => t.store.appendMessage(t.threadId, user([{ type: 'dynamic-tool', toolCallId: 7, toolName: 'x' }])),
    names: '7',
  },
  {
    method: 'appendMessage',
    input: 'NUL in text',
    call: (t) => t.store.appendMessage(t.threadId, user(text('a\u0000b'))),
    names: '"a\\u0000b"',
  },
  {
    method: 'appendMessage',
    input: 'a lone high surrogate in text',
    call: (t) => t.store.appendMessage(t.threadId, user(text('a\ud800b'))),
    names: '"a\\ud800b"',
  },
  {
    method: 'appendMessage',
    input: 'a lone low surrogate in a tool output',
    call: (t) =>
      t.store.appendMessage(t.threadId, user([{ type: 'tool-x', toolCallId: 'c', output: { v: '\udc00' } }])),
    names: '"\\udc00"',
  },
  {
    method: 'appendMessage',
    input: 'a lone surrogate in a metadata key',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: { ['k\udc00']: 1 } })),
    names: '"k\\udc00"',
  },
  {
    method: 'appendMessage',
    input: 'NUL in a metadata value',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: { note: 'x\u0000' } })),
    names: '"x\\u0000"',
  },
  {
    method: 'appendMessage',
    input: 'a payload one byte over the limit',
    call: (t) =>
      t.store.appendMessage(t.threadId, { id: 'huge', role: 'user', parts: text('x'.repeat(t.maxMessageBytes)) }),
    names: '"huge"',
  },
  {
    method: 'appendMessage',
    input: 'a 5 MB payload',
    call: (t) =>
      t.store.appendMessage(t.threadId, { id: 'huge-5mb', role: 'user', parts: text('y'.repeat(5_000_000)) }),
    names: '"huge-5mb"',
  },
  {
    method: 'appendMessage',
    input: 'metadata nested 100 deep',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: deep(100) })),
    names: 'nested deeper',
  },
  {
    method: 'appendMessage',
    input: 'metadata an array',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: [1, 2] })),
    names: '[1,2]',
  },
  {
    method: 'appendMessage',
    input: 'metadata a string',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: 'meta' })),
    names: '"meta"',
  },
  {
    method: 'appendMessage',
    input: 'metadata a number',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: 5 })),
    names: 'metadata 5',
  },
  {
    method: 'appendMessage',
    input: 'a function in metadata',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: { f: () => 1 } })),
    names: 'function',
  },
  {
    method: 'appendMessage',
    input: 'a bigint in metadata',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: { n: 10n } })),
    names: 'bigint',
  },
  {
    method: 'appendMessage',
    input: 'NaN in metadata',
    call: (t) => t.store.appendMessage(t.threadId, user(text('hi'), { metadata: { n: Number.NaN } })),
    names: 'NaN',
  },
  {
    method: 'appendMessage',
    input: 'Infinity in a part',
    call: (t) => t.store.appendMessage(t.threadId, user([{ type: 'data-x', data: Number.POSITIVE_INFINITY }])),
    names: 'Infinity',
  },
  {
    method: 'appendMessage',
    input: 'an empty message id',
    call: (t) => t.store.appendMessage(t.threadId, { id: '', role: 'user', parts: text('hi') }),
    names: 'id ""',
  },
  {
    method: 'appendMessage',
    input: 'a 201-character message id',
    call: (t) => t.store.appendMessage(t.threadId, { id: LONG_ID, role: 'user', parts: text('hi') }),
    names: '"iiiiiiii',
  },
  {
    method: 'appendMessage',
    input: 'a numeric message id',
    call: (t) => t.store.appendMessage(t.threadId, { id: 42, role: 'user', parts: text('hi') } as never),
    names: 'id 42',
  },
  {
    method: 'appendMessage',
    input: 'NUL in the message id',
    call: (t) => t.store.appendMessage(t.threadId, { id: 'm\u0000', role: 'user', parts: text('hi') }),
    names: '"m\\u0000"',
  },
  {
    method: 'appendMessage',
    input: "role 'robot'",
    call: (t) => t.store.appendMessage(t.threadId, { id: 'r', role: 'robot', parts: text('hi') } as never),
    names: '"robot"',
  },
  {
    method: 'appendMessage',
    input: "role 'tool'",
    call: (t) => t.store.appendMessage(t.threadId, { id: 'r', role: 'tool', parts: text('hi') } as never),
    names: '"tool"',
  },
  // appendMessage: the options and the thread
  {
    method: 'appendMessage',
    input: 'an empty clientRequestId',
    call: (t) =>
      t.store.appendMessage(t.threadId, { id: 'o1', role: 'user', parts: text('hi') }, { clientRequestId: '' }),
    names: 'clientRequestId ""',
  },
  {
    method: 'appendMessage',
    input: 'a numeric clientRequestId',
    call: (t) =>
      t.store.appendMessage(
        t.threadId,
        { id: 'o2', role: 'user', parts: text('hi') },
        { clientRequestId: 123 as never },
      ),
    names: '123',
  },
  {
    method: 'appendMessage',
    input: 'a non-uuid runId',
    call: (t) => t.store.appendMessage(t.threadId, { id: 'o3', role: 'user', parts: text('hi') }, { runId: 'run-1' }),
    names: '"run-1"',
  },
  {
    method: 'appendMessage',
    input: "status 'done'",
    call: (t) =>
      t.store.appendMessage(t.threadId, { id: 'o4', role: 'user', parts: text('hi') }, { status: 'done' as never }),
    names: '"done"',
  },
  {
    method: 'appendMessage',
    input: "pinned 'maybe'",
    call: (t) =>
      t.store.appendMessage(t.threadId, { id: 'o5', role: 'user', parts: text('hi') }, { pinned: 'maybe' as never }),
    names: '"maybe"',
  },
  {
    method: 'appendMessage',
    input: 'a non-uuid thread id',
    call: (t) => t.store.appendMessage("1' or '1'='1", { id: 'o6', role: 'user', parts: text('hi') }),
    names: `"1' or '1'='1"`,
  },
  {
    method: 'appendMessage',
    input: 'a numeric thread id',
    call: (t) => t.store.appendMessage(42 as never, { id: 'o7', role: 'user', parts: text('hi') }),
    names: '42',
  },
  // assistant lifecycle
  {
    method: 'beginAssistantMessage',
    input: 'an empty message id',
    call: (t) => t.store.beginAssistantMessage(t.threadId, { messageId: '' }),
    names: '""',
  },
  {
    method: 'beginAssistantMessage',
    input: 'metadata an array',
    call: (t) => t.store.beginAssistantMessage(t.threadId, { messageId: 'b1', metadata: ['x'] as never }),
    names: '["x"]',
  },
  {
    method: 'checkpointMessage',
    input: 'parts a string',
    call: (t) => t.store.checkpointMessage(t.threadId, t.streamingMessageId, { parts: 'x' as never }),
    names: '"x"',
  },
  {
    method: 'checkpointMessage',
    input: 'NUL in a checkpointed text',
    call: (t) => t.store.checkpointMessage(t.threadId, t.streamingMessageId, { parts: text('\u0000') }),
    names: '"\\u0000"',
  },
  // A checkpoint over maxMessageBytes is not malformed: what the model produced is always stored (tool
  // payloads become previews, text is kept whole), see test/store/oversized-answers.test.ts.
  {
    method: 'checkpointMessage',
    input: 'an empty message id',
    call: (t) => t.store.checkpointMessage(t.threadId, '', { parts: text('x') }),
    names: '""',
  },
  {
    method: 'reopenAssistantMessage',
    input: 'parts a string',
    call: (t) =>
      t.store.reopenAssistantMessage(t.threadId, t.streamingMessageId, { expectedParts: [], parts: 'x' as never }),
    names: '"x"',
  },
  {
    method: 'reopenAssistantMessage',
    input: 'expectedParts a string',
    call: (t) =>
      t.store.reopenAssistantMessage(t.threadId, t.streamingMessageId, { expectedParts: 'y' as never, parts: [] }),
    names: '"y"',
  },
  {
    method: 'reopenAssistantMessage',
    input: 'runId not a uuid',
    call: (t) =>
      t.store.reopenAssistantMessage(t.threadId, t.streamingMessageId, { expectedParts: [], parts: [], runId: 'nope' }),
    names: '"nope"',
  },
  {
    method: 'finalizeMessage',
    input: "status 'done'",
    call: (t) => t.store.finalizeMessage(t.threadId, t.streamingMessageId, { status: 'done' as never, parts: [] }),
    names: '"done"',
  },
  {
    method: 'finalizeMessage',
    input: "status 'streaming'",
    call: (t) => t.store.finalizeMessage(t.threadId, t.streamingMessageId, { status: 'streaming' as never, parts: [] }),
    names: '"streaming"',
  },
  {
    method: 'finalizeMessage',
    input: 'a lone surrogate in the final parts',
    call: (t) =>
      t.store.finalizeMessage(t.threadId, t.streamingMessageId, { status: 'completed', parts: text('\ud83d') }),
    names: '"\\ud83d"',
  },
  {
    method: 'finalizeMessage',
    input: 'metadata a number',
    call: (t) =>
      t.store.finalizeMessage(t.threadId, t.streamingMessageId, {
        status: 'completed',
        parts: [],
        metadata: 3 as never,
      }),
    names: 'metadata 3',
  },
  // message state
  {
    method: 'excludeMessages',
    input: 'no message ids',
    call: (t) => t.store.excludeMessages(t.threadId, [], { reason: 'x' }),
    names: '[]',
  },
  {
    method: 'excludeMessages',
    input: 'message ids a string',
    call: (t) => t.store.excludeMessages(t.threadId, 'm1' as never, { reason: 'x' }),
    names: '"m1"',
  },
  {
    method: 'excludeMessages',
    input: 'a numeric message id',
    call: (t) => t.store.excludeMessages(t.threadId, [42] as never, { reason: 'x' }),
    names: '[42]',
  },
  {
    method: 'excludeMessages',
    input: 'an empty reason',
    call: (t) => t.store.excludeMessages(t.threadId, [t.messageId], { reason: '' }),
    names: 'reason ""',
  },
  {
    method: 'excludeMessages',
    input: 'a numeric reason',
    call: (t) => t.store.excludeMessages(t.threadId, [t.messageId], { reason: 42 as never }),
    names: 'reason 42',
  },
  {
    method: 'includeMessages',
    input: 'message ids null',
    call: (t) => t.store.includeMessages(t.threadId, null as never),
    names: 'null',
  },
  {
    method: 'pinMessage',
    input: 'a missing message id',
    call: (t) => t.store.pinMessage(t.threadId, 'nope-404'),
    names: '"nope-404"',
  },
  // reads
  {
    method: 'listMessages',
    input: 'limit 0',
    call: (t) => t.store.listMessages(t.threadId, { limit: 0 }),
    names: 'options.limit 0',
  },
  {
    method: 'listMessages',
    input: 'limit -1',
    call: (t) => t.store.listMessages(t.threadId, { limit: -1 }),
    names: '-1',
  },
  {
    method: 'listMessages',
    input: 'limit 10^9',
    call: (t) => t.store.listMessages(t.threadId, { limit: 1e9 }),
    names: '1000000000',
  },
  {
    method: 'listMessages',
    input: 'limit 1.5',
    call: (t) => t.store.listMessages(t.threadId, { limit: 1.5 }),
    names: '1.5',
  },
  {
    method: 'listMessages',
    input: "limit '10'",
    call: (t) => t.store.listMessages(t.threadId, { limit: '10' as never }),
    names: '"10"',
  },
  {
    method: 'listMessages',
    input: 'before 0',
    call: (t) => t.store.listMessages(t.threadId, { before: 0 }),
    names: 'options.before 0',
  },
  {
    method: 'listMessages',
    input: 'before -5',
    call: (t) => t.store.listMessages(t.threadId, { before: -5 }),
    names: '-5',
  },
  {
    method: 'listMessages',
    input: 'before 2^60',
    call: (t) => t.store.listMessages(t.threadId, { before: 2 ** 60 }),
    names: '1152921504606847000',
  },
  {
    method: 'listMessages',
    input: 'before NaN',
    call: (t) => t.store.listMessages(t.threadId, { before: Number.NaN }),
    names: 'options.before NaN',
  },
  {
    method: 'listMessages',
    input: 'limit Infinity',
    call: (t) => t.store.listMessages(t.threadId, { limit: Number.POSITIVE_INFINITY }),
    names: 'options.limit Infinity',
  },
  {
    method: 'listMessages',
    input: "roles ['robot']",
    call: (t) => t.store.listMessages(t.threadId, { roles: ['robot'] as never }),
    names: '["robot"]',
  },
  {
    method: 'listMessages',
    input: 'roles a string',
    call: (t) => t.store.listMessages(t.threadId, { roles: 'user' as never }),
    names: '"user"',
  },
  {
    method: 'getMessage',
    input: 'a non-uuid thread id',
    call: (t) => t.store.getMessage('../../etc/passwd', t.messageId),
    names: '"../../etc/passwd"',
  },
  { method: 'listThreads', input: 'limit 1000', call: (t) => t.store.listThreads({ limit: 1000 }), names: '1000' },
  {
    method: 'listThreads',
    input: 'a garbage cursor',
    call: (t) => t.store.listThreads({ cursor: '%%%garbage' }),
    names: '"%%%garbage"',
  },
  {
    method: 'listThreads',
    input: 'a cursor with a bad date',
    call: (t) =>
      t.store.listThreads({
        cursor: Buffer.from('["not-a-date","00000000-0000-0000-0000-000000000000"]').toString('base64url'),
      }),
    names: 'cursor',
  },
  {
    method: 'listThreads',
    input: 'a numeric userId',
    call: (t) => t.store.listThreads({ userId: 42 as never }),
    names: 'userId 42',
  },
  {
    method: 'listThreads',
    input: 'NUL in the userId',
    call: (t) => t.store.listThreads({ userId: 'u\u0000' }),
    names: '"u\\u0000"',
  },
  {
    method: 'loadContext',
    input: 'maxTailMessages 0',
    call: (t) => t.store.loadContext(t.threadId, { maxTailMessages: 0 }),
    names: 'maxTailMessages 0',
  },
  {
    method: 'getRun',
    input: 'a non-uuid run id',
    call: (t) => t.store.getRun('run; drop table agent_run'),
    names: '"run; drop table agent_run"',
  },
  // search
  { method: 'searchMessages', input: 'an empty query', call: (t) => t.store.searchMessages(''), names: 'query ""' },
  {
    method: 'searchMessages',
    input: 'a blank query',
    call: (t) => t.store.searchMessages(' \t\n '),
    names: '" \\t\\n "',
  },
  {
    method: 'searchMessages',
    input: 'a 1001-character query',
    call: (t) => t.store.searchMessages('q'.repeat(1001)),
    names: '"qqqq',
  },
  {
    method: 'searchMessages',
    input: 'NUL in the query',
    call: (t) => t.store.searchMessages('a\u0000b'),
    names: '"a\\u0000b"',
  },
  {
    method: 'searchMessages',
    input: 'a lone surrogate in the query',
    call: (t) => t.store.searchMessages('\udfff'),
    names: '"\\udfff"',
  },
  {
    method: 'searchMessages',
    input: 'a numeric query',
    call: (t) => t.store.searchMessages(42 as never),
    names: 'query 42',
  },
  {
    method: 'searchMessages',
    input: 'limit 0',
    call: (t) => t.store.searchMessages('hi', { limit: 0 }),
    names: 'options.limit 0',
  },
  {
    method: 'searchMessages',
    input: 'limit 101',
    call: (t) => t.store.searchMessages('hi', { limit: 101 }),
    names: '101',
  },
  {
    method: 'searchMessages',
    input: 'a non-uuid threadId',
    call: (t) => t.store.searchMessages('hi', { threadId: 'x' }),
    names: '"x"',
  },
  {
    method: 'searchMessages',
    input: 'NUL in the userId',
    call: (t) => t.store.searchMessages('hi', { userId: 'u\u0000' }),
    names: '"u\\u0000"',
  },
  // threads
  {
    method: 'createThread',
    input: 'a non-uuid id',
    call: (t) => t.store.createThread({ id: 'thread-1' }),
    names: '"thread-1"',
  },
  {
    method: 'createThread',
    input: 'a 1001-character title',
    call: (t) => t.store.createThread({ title: 't'.repeat(1001) }),
    names: '"tttt',
  },
  {
    method: 'createThread',
    input: 'NUL in the title',
    call: (t) => t.store.createThread({ title: 'a\u0000' }),
    names: '"a\\u0000"',
  },
  {
    method: 'createThread',
    input: 'metadata an array',
    call: (t) => t.store.createThread({ metadata: ['a'] as never }),
    names: '["a"]',
  },
  {
    method: 'createThread',
    input: 'a numeric userId',
    call: (t) => t.store.createThread({ userId: 7 as never }),
    names: 'userId 7',
  },
  {
    method: 'renameThread',
    input: 'a numeric title',
    call: (t) => t.store.renameThread(t.threadId, { title: 42 as never }),
    names: 'title 42',
  },
  {
    method: 'updateThreadMetadata',
    input: 'metadata a string',
    call: (t) => t.store.updateThreadMetadata(t.threadId, { metadata: 'x' as never }),
    names: '"x"',
  },
  {
    method: 'forkThread',
    input: 'atSequence -1',
    call: (t) => t.store.forkThread(t.threadId, { atSequence: -1 }),
    names: '-1',
  },
  {
    method: 'forkThread',
    input: 'atSequence 1.5',
    call: (t) => t.store.forkThread(t.threadId, { atSequence: 1.5 }),
    names: '1.5',
  },
  {
    method: 'forkThread',
    input: 'atSequence past the end',
    call: (t) => t.store.forkThread(t.threadId, { atSequence: 1_000_000 }),
    names: '1000000',
  },
  {
    method: 'forkThread',
    input: 'a non-uuid new id',
    call: (t) => t.store.forkThread(t.threadId, { atSequence: 1, id: 'fork' }),
    names: '"fork"',
  },
  { method: 'deleteThread', input: 'a non-uuid thread id', call: (t) => t.store.deleteThread('*'), names: '"*"' },
  // runs
  {
    method: 'startRun',
    input: 'metadata an array',
    call: (t) => t.store.startRun(t.threadId, { metadata: [] as never }),
    names: '[]',
  },
  {
    method: 'startRun',
    input: 'NUL in the provider',
    call: (t) => t.store.startRun(t.threadId, { provider: 'p\u0000' }),
    names: '"p\\u0000"',
  },
  {
    method: 'startRun',
    input: 'a numeric model',
    call: (t) => t.store.startRun(t.threadId, { model: 4 as never }),
    names: 'model 4',
  },
  {
    method: 'finishRun',
    input: "status 'done'",
    call: (t) => t.store.finishRun(t.runId, { status: 'done' as never }),
    names: '"done"',
  },
  {
    method: 'finishRun',
    input: 'negative input tokens',
    call: (t) => t.store.finishRun(t.runId, { status: 'completed', usage: { inputTokens: -1 } }),
    names: '-1',
  },
  {
    method: 'finishRun',
    input: 'fractional output tokens',
    call: (t) => t.store.finishRun(t.runId, { status: 'completed', usage: { outputTokens: 0.5 } }),
    names: '0.5',
  },
  {
    method: 'finishRun',
    input: 'token counts past int4',
    call: (t) => t.store.finishRun(t.runId, { status: 'completed', usage: { inputTokens: 2 ** 40 } }),
    names: '1099511627776',
  },
  {
    method: 'finishRun',
    input: 'a non-uuid run id',
    call: (t) => t.store.finishRun('7', { status: 'completed' }),
    names: '"7"',
  },
  // redaction and retention
  {
    method: 'redactMessage',
    input: 'no spans',
    call: (t) => t.store.redactMessage(t.threadId, t.messageId, { spans: [], actor: 'a', reason: 'r' }),
    names: '[]',
  },
  {
    method: 'redactMessage',
    input: 'an empty span',
    call: (t) => t.store.redactMessage(t.threadId, t.messageId, { spans: [''], actor: 'a', reason: 'r' }),
    names: '[""]',
  },
  {
    method: 'redactMessage',
    input: 'an empty actor',
    call: (t) => t.store.redactMessage(t.threadId, t.messageId, { actor: '', reason: 'r' }),
    names: 'actor ""',
  },
  {
    method: 'redactMessage',
    input: 'a replacement containing the span',
    call: (t) =>
      t.store.redactMessage(t.threadId, t.messageId, {
        spans: ['secret'],
        replacement: '[secret]',
        actor: 'a',
        reason: 'r',
      }),
    names: '"[secret]"',
  },
  {
    method: 'redactMessage',
    input: 'a numeric replacement',
    call: (t) => t.store.redactMessage(t.threadId, t.messageId, { replacement: 5 as never, actor: 'a', reason: 'r' }),
    names: 'replacement 5',
  },
  {
    method: 'deleteThreadsOlderThan',
    input: 'olderThan a string',
    call: (t) => t.store.deleteThreadsOlderThan({ olderThan: 'yesterday' as never }),
    names: '"yesterday"',
  },
  {
    method: 'deleteThreadsOlderThan',
    input: 'an invalid Date',
    call: (t) => t.store.deleteThreadsOlderThan({ olderThan: new Date('nope') }),
    names: 'olderThan',
  },
  {
    method: 'deleteThreadsOlderThan',
    input: 'batchSize 0',
    call: (t) => t.store.deleteThreadsOlderThan({ olderThan: new Date(0), batchSize: 0 }),
    names: 'batchSize 0',
  },
  // summaries and snapshots
  {
    method: 'writeSummary',
    input: 'empty content',
    call: (t) => t.store.writeSummary(t.threadId, { ...SUMMARY, content: '' }),
    names: 'content ""',
  },
  {
    method: 'writeSummary',
    input: 'NUL in the content',
    call: (t) => t.store.writeSummary(t.threadId, { ...SUMMARY, content: 'x\u0000' }),
    names: '"x\\u0000"',
  },
  {
    method: 'writeSummary',
    input: 'a negative token count',
    call: (t) => t.store.writeSummary(t.threadId, { ...SUMMARY, tokenCount: -3 }),
    names: '-3',
  },
  {
    method: 'writeSummary',
    input: 'fromSequence 0',
    call: (t) => t.store.writeSummary(t.threadId, { ...SUMMARY, fromSequence: 0 }),
    names: 'fromSequence 0',
  },
  {
    method: 'writeSummary',
    input: 'throughSequence before fromSequence',
    call: (t) => t.store.writeSummary(t.threadId, { ...SUMMARY, fromSequence: 2, throughSequence: 1 }),
    names: 'throughSequence 1',
  },
  {
    method: 'writeSummary',
    input: 'throughSequence past the thread',
    call: (t) => t.store.writeSummary(t.threadId, { ...SUMMARY, throughSequence: 999 }),
    names: '999',
  },
  {
    method: 'writeSummary',
    input: 'no policyVersion',
    call: (t) => t.store.writeSummary(t.threadId, { ...SUMMARY, policyVersion: undefined as never }),
    names: 'policyVersion',
  },
  {
    method: 'writeSnapshot',
    input: 'expectedVersion -1',
    call: (t) => t.store.writeSnapshot(t.threadId, { ...SNAPSHOT, expectedVersion: -1 }),
    names: '-1',
  },
  {
    method: 'writeSnapshot',
    input: 'includedSequences [0]',
    call: (t) => t.store.writeSnapshot(t.threadId, { ...SNAPSHOT, includedSequences: [0] }),
    names: '[0]',
  },
  {
    method: 'writeSnapshot',
    input: 'includedSequences a string',
    call: (t) => t.store.writeSnapshot(t.threadId, { ...SNAPSHOT, includedSequences: '1,2' as never }),
    names: '"1,2"',
  },
  {
    method: 'writeSnapshot',
    input: 'throughSequence past the thread',
    call: (t) => t.store.writeSnapshot(t.threadId, { ...SNAPSHOT, throughSequence: 10 ** 12 }),
    names: '1000000000000',
  },
  {
    method: 'writeSnapshot',
    input: 'no messagesHash',
    call: (t) => t.store.writeSnapshot(t.threadId, { ...SNAPSHOT, messagesHash: undefined as never }),
    names: 'messagesHash',
  },
  {
    method: 'writeSnapshot',
    input: 'a non-uuid summaryId',
    call: (t) => t.store.writeSnapshot(t.threadId, { ...SNAPSHOT, summaryId: 'summary-1' }),
    names: '"summary-1"',
  },
  {
    method: 'writeSnapshot',
    input: 'a cyclic pruned report',
    call: (t) => {
      const pruned: Record<string, unknown> = {};
      pruned.self = pruned;
      return t.store.writeSnapshot(t.threadId, { ...SNAPSHOT, pruned });
    },
    names: 'pruned',
  },
];
