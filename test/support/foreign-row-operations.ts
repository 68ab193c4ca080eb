import type { TenantHistory } from '../../src/index.js';
import { userMessage } from './fixtures.js';

/** The ids of the victim's rows that another tenant or another user aims at. */
export interface Target {
  threadId: string;
  runId: string;
  messageId: string;
  pendingId: string;
}

/**
 * Every store operation that takes a thread or run id, aimed at `target` (another tenant's or another user's
 * rows): each must fail exactly as on a missing id (`NotFoundError`) and write nothing. One list for the tenant and
 * the user isolation tests, so a method added to the store is aimed at both ({@link unaimedStoreMethods}).
 */
export const FOREIGN_ROW_OPERATIONS: Array<[string, (store: TenantHistory, target: Target) => Promise<unknown>]> = [
  ['getThread', (store, t) => store.getThread(t.threadId)],
  ['renameThread', (store, t) => store.renameThread(t.threadId, { title: 'pwned' })],
  ['updateThreadMetadata', (store, t) => store.updateThreadMetadata(t.threadId, { metadata: { pwned: true } })],
  ['softDeleteThread', (store, t) => store.softDeleteThread(t.threadId)],
  ['deleteThread', (store, t) => store.deleteThread(t.threadId)],
  ['forkThread', (store, t) => store.forkThread(t.threadId, { atSequence: 1 })],
  ['startRun', (store, t) => store.startRun(t.threadId)],
  ['finishRun', (store, t) => store.finishRun(t.runId, { status: 'completed', usage: { inputTokens: 1 } })],
  ['failRun', (store, t) => store.failRun(t.runId, { error: new Error('x') })],
  ['getRun', (store, t) => store.getRun(t.runId)],
  ['appendMessage', (store, t) => store.appendMessage(t.threadId, userMessage('intruder', 'hi'))],
  ['beginAssistantMessage', (store, t) => store.beginAssistantMessage(t.threadId, { messageId: 'intruder' })],
  [
    'checkpointMessage',
    (store, t) => store.checkpointMessage(t.threadId, t.pendingId, { parts: [{ type: 'text', text: 'x' }] }),
  ],
  ['finalizeMessage', (store, t) => store.finalizeMessage(t.threadId, t.pendingId, { status: 'completed', parts: [] })],
  ['excludeMessages', (store, t) => store.excludeMessages(t.threadId, [t.messageId], { reason: 'x' })],
  ['includeMessages', (store, t) => store.includeMessages(t.threadId, [t.messageId])],
  ['pinMessage', (store, t) => store.pinMessage(t.threadId, t.messageId)],
  ['unpinMessage', (store, t) => store.unpinMessage(t.threadId, t.messageId)],
  ['getMessage', (store, t) => store.getMessage(t.threadId, t.messageId)],
  ['listMessages', (store, t) => store.listMessages(t.threadId)],
  ['listChatMessages', (store, t) => store.listChatMessages(t.threadId)],
  ['redactMessage', (store, t) => store.redactMessage(t.threadId, t.messageId, { actor: 'x', reason: 'x' })],
  ['loadContext', (store, t) => store.loadContext(t.threadId)],
  [
    'writeSummary',
    (store, t) =>
      store.writeSummary(t.threadId, {
        fromSequence: 1,
        throughSequence: 1,
        content: 'x',
        tokenCount: 1,
        policyVersion: 'p',
      }),
  ],
  [
    'writeSnapshot',
    (store, t) =>
      store.writeSnapshot(t.threadId, {
        expectedVersion: 1,
        throughSequence: 1,
        includedSequences: [],
        policyVersion: 'p',
        messagesHash: 'h',
      }),
  ],
  ['listSummaries', (store, t) => store.listSummaries(t.threadId)],
  ['contextStore().loadContext', (store, t) => store.contextStore(t.threadId).loadContext()],
  [
    'reopenAssistantMessage',
    (store, t) => store.reopenAssistantMessage(t.threadId, t.pendingId, { expectedParts: [], parts: [] }),
  ],
  [
    'appendStreamChunks',
    (store, t) => store.appendStreamChunks(t.threadId, t.pendingId, { batch: 1, chunks: [{ type: 'pwned' }] }),
  ],
  ['readStreamChunks', (store, t) => store.readStreamChunks(t.threadId, t.pendingId)],
  ['streamToolPayload', (store, t) => store.streamToolPayload(t.threadId, t.pendingId, { toolCallId: PAYLOAD_CALL })],
  ['getWorkingMemory', (store, t) => store.getWorkingMemory({ scope: 'thread', threadId: t.threadId })],
  [
    'updateWorkingMemory',
    (store, t) =>
      store.updateWorkingMemory({ scope: 'thread', threadId: t.threadId, content: 'pwned', expectedVersion: 1 }),
  ],
  ['recallMessages', (store, t) => store.recallMessages({ query: 'alpha', threadId: t.threadId })],
  [
    'contextStore().updateWorkingMemory',
    (store, t) =>
      store
        .contextStore(t.threadId, { workingMemoryScope: 'thread' })
        .updateWorkingMemory({ content: 'pwned', expectedVersion: 0 }),
  ],
  [
    'contextStore().loadMemory',
    (store, t) =>
      store.contextStore(t.threadId, { workingMemoryScope: 'thread' }).loadMemory!({ query: 'alpha', limit: 5 }),
  ],
];

/** The tool call of the payload that the victim's pending answer keeps in `agent_tool_payload` ({@link payloadParts}). */
export const PAYLOAD_CALL = 'call-payload';

/**
 * Parts whose tool output is over `maxMessageBytes: 2048`: checkpointed through a store with that limit, the
 * victim's answer keeps the output in `agent_tool_payload` and a preview in its parts.
 */
export const payloadParts = [
  {
    type: 'tool-readFile',
    toolCallId: PAYLOAD_CALL,
    state: 'output-available',
    input: { path: 'secret.txt' },
    output: `alpha payload ${'p'.repeat(4000)}`,
  },
];

/**
 * Store methods that take no id of a row another tenant or user could name (they act on the caller's own scope),
 * or that answer a foreign id with "nothing" rather than `NotFoundError` (checked by the isolation tests
 * themselves): the rest must be in {@link FOREIGN_ROW_OPERATIONS}.
 */
const NOT_AIMED = new Set([
  'tenantId',
  'userId',
  'createThread',
  'listThreads',
  'searchMessages',
  'recoverAbandonedMessages',
  'deleteThreadsOlderThan',
  'rebuildDerivedData',
  'indexPendingMessages',
  // Embeds the caller's own messages (the tenant's, or the scoped user's): it takes no id.
  'embedPendingMemory',
  // A foreign or missing thread has no chunk logs: 0 deleted / no subscription, the same answer for both.
  'deleteStreamChunks',
  'subscribeStreamChunks',
]);

/** The store's methods that neither list aims at another tenant's or user's rows: a new method lands here. */
export function unaimedStoreMethods(store: TenantHistory): string[] {
  const aimed = new Set(FOREIGN_ROW_OPERATIONS.map(([name]) => name.replace(/\(.*$/, '')));
  return Object.keys(store).filter((name) => !aimed.has(name) && !NOT_AIMED.has(name));
}
