import { appendMessage } from './append-message.js';
import { withStoreErrors } from './with-store-errors.js';
import { withStoreSpans } from './with-store-spans.js';
import { appendStreamChunks, deleteStreamChunks, readStreamChunks } from './stream-chunks.js';
import { subscribeStreamChunks } from './stream-notifications.js';
import { beginAssistantMessage, checkpointMessage, finalizeMessage } from './assistant-lifecycle.js';
import { reopenAssistantMessage } from './reopen-assistant-message.js';
import { recoverAbandonedMessages } from './recover-abandoned-messages.js';
import { rebuildDerivedData } from './rebuild-derived-data.js';
import { listSummaries } from './list-summaries.js';
import { loadContext } from './load-context.js';
import { writeSnapshot } from './write-snapshot.js';
import { writeSummary } from './write-summary.js';
import { getMessage, listMessages } from './list-messages.js';
import { listChatMessages } from './list-chat-messages.js';
import { streamToolPayload } from './stream-tool-payload.js';
import { excludeMessages, includeMessages, pinMessage, unpinMessage } from './message-state.js';
import { redactMessage } from './redact-message.js';
import { deleteThreadsOlderThan } from './retention.js';
import { failRun, finishRun, getRun, startRun } from './runs.js';
import { searchMessages } from './search-messages.js';
import { indexPendingMessages } from './search-indexing.js';
import type { StoreContext } from './store-context.js';
import { createThread, deleteThread, getThread, listThreads, softDeleteThread, updateThread } from './threads.js';
import { forkThread } from './fork-thread.js';
import { createThreadContextStore } from './thread-context-store.js';
import { memoryMethods } from './memory-operations.js';
import type { TenantHistory } from './tenant-history.js';

/** The methods of a tenant's store over `context`, each one async, with the store's errors and spans. */
export function tenantHistory(context: StoreContext): TenantHistory {
  /** A write that may leave messages without a search vector: `search: 'background'` indexes its tenant later. */
  const noted = <RESULT>(result: RESULT): RESULT => {
    context.searchDrain?.note(context.tenantId);
    return result;
  };
  // Every method is async: bad input is a rejected promise, never a synchronous throw escaping a `.catch()` chain.
  const methods: Omit<TenantHistory, 'tenantId' | 'userId' | 'contextStore'> = {
    createThread: async (options) => createThread(context, options),
    getThread: async (threadId) => getThread(context, threadId),
    listThreads: async (options) => listThreads(context, options),
    renameThread: async (threadId, options) =>
      updateThread(context, threadId, { title: options?.title, derivedFrom: options?.derivedFrom }),
    updateThreadMetadata: async (threadId, options) => updateThread(context, threadId, { metadata: options?.metadata }),
    softDeleteThread: async (threadId, options) => softDeleteThread(context, threadId, options),
    deleteThread: async (threadId, options) => deleteThread(context, threadId, options),
    forkThread: async (threadId, options) => noted(await forkThread(context, threadId, options)),

    startRun: async (threadId, options) => startRun(context, threadId, options),
    finishRun: async (runId, options) => finishRun(context, runId, options),
    failRun: async (runId, options) => failRun(context, runId, options),
    getRun: async (runId) => getRun(context, runId),

    appendMessage: async (threadId, message, options) =>
      noted(await appendMessage(context, threadId, message, options)),
    beginAssistantMessage: async (threadId, options) => noted(await beginAssistantMessage(context, threadId, options)),
    checkpointMessage: async (threadId, messageId, options) =>
      noted(await checkpointMessage(context, threadId, messageId, options)),
    finalizeMessage: async (threadId, messageId, options) =>
      noted(await finalizeMessage(context, threadId, messageId, options)),
    reopenAssistantMessage: async (threadId, messageId, options) =>
      noted(await reopenAssistantMessage(context, threadId, messageId, options)),
    recoverAbandonedMessages: async () => noted(await recoverAbandonedMessages(context)),
    rebuildDerivedData: async (options) => rebuildDerivedData(context, options),
    excludeMessages: async (threadId, messageIds, options) => excludeMessages(context, threadId, messageIds, options),
    includeMessages: async (threadId, messageIds, options) => includeMessages(context, threadId, messageIds, options),
    pinMessage: async (threadId, messageId) => pinMessage(context, threadId, messageId),
    unpinMessage: async (threadId, messageId) => unpinMessage(context, threadId, messageId),
    getMessage: async (threadId, messageId, options) => getMessage(context, threadId, messageId, options),
    listMessages: async (threadId, options) => listMessages(context, threadId, options),
    listChatMessages: async (threadId, options) => listChatMessages(context, threadId, options),
    streamToolPayload: async (threadId, messageId, options) => streamToolPayload(context, threadId, messageId, options),
    searchMessages: async (query, options) => searchMessages(context, query, options),
    indexPendingMessages: async (options) => indexPendingMessages(context, options),
    redactMessage: async (threadId, messageId, options) => redactMessage(context, threadId, messageId, options),
    deleteThreadsOlderThan: async (options) => deleteThreadsOlderThan(context, options),

    loadContext: async (threadId, options) => loadContext(context, threadId, options),
    writeSummary: async (threadId, summary) => writeSummary(context, threadId, summary),
    writeSnapshot: async (threadId, snapshot) => writeSnapshot(context, threadId, snapshot),
    listSummaries: async (threadId) => listSummaries(context, threadId),

    appendStreamChunks: async (threadId, messageId, options) =>
      appendStreamChunks(context, threadId, messageId, options),
    readStreamChunks: async (threadId, messageId, options) => readStreamChunks(context, threadId, messageId, options),
    deleteStreamChunks: async (threadId, options) => deleteStreamChunks(context, threadId, options),
    subscribeStreamChunks: async (threadId, messageId, onNotify) =>
      subscribeStreamChunks(context, threadId, messageId, onNotify),
    ...memoryMethods(context),
  };
  const { tenantId } = context;
  return {
    tenantId,
    userId: context.userId,
    // A failed statement or a lost connection becomes a DatabaseError, whose message holds no parameters; the span
    // around it sees that typed error, so it records the error's code.
    ...withStoreSpans(withStoreErrors(methods), { kind: 'store', tenantId }),
    contextStore: (threadId, options) => {
      const store = createThreadContextStore(context, threadId, options);
      return withStoreSpans(withStoreErrors(store), {
        kind: 'context-store',
        tenantId,
        threadId: threadId.toLowerCase(),
      });
    },
  };
}
