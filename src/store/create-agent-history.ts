import { randomUUID } from 'node:crypto';
import { DEFAULT_APP_ROLE, defineAgentTables, type AgentTables } from '../schema/define-agent-tables.js';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import { assertTenantId } from '../tenant/tenant-id.js';
import { appendMessage, type AppendMessageOptions } from './append-message.js';
import { withStoreErrors } from './with-store-errors.js';
import { createAppendBatcher, type AppendBatchingOptions } from './append-batcher.js';
import { appendStatements } from './append-statements.js';
import {
  beginAssistantMessage,
  checkpointMessage,
  finalizeMessage,
  recoverAbandonedMessages,
  type BeginAssistantMessageOptions,
  type FinalStatus,
} from './assistant-lifecycle.js';
import { listSummaries, loadContext, writeSnapshot, writeSummary } from './context-artifacts.js';
import type { NewSnapshot, NewSummary } from '../model/context-store.js';
import { getMessage, listMessages, type ListMessagesOptions } from './list-messages.js';
import { excludeMessages, includeMessages, pinMessage, type ExcludeMessagesOptions } from './message-state.js';
import { redactMessage, type RedactMessageOptions } from './redact-message.js';
import { deleteThreadsOlderThan, type RetentionOptions } from './retention.js';
import { failRun, finishRun, getRun, startRun, type FinishRunOptions, type StartRunOptions } from './runs.js';
import { searchMessages, type SearchMessagesOptions } from './search-messages.js';
import type { StoreContext } from './store-context.js';
import {
  createThread,
  deleteThread,
  forkThread,
  getThread,
  listThreads,
  softDeleteThread,
  updateThread,
  type CreateThreadOptions,
  type ListThreadsOptions,
} from './threads.js';
import { loadO200kTokenCounter, type TokenCounter } from '../tokens/token-counter.js';
import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import type { RunUsage } from '../model/stored-rows.js';
import type { StorableMessage } from '../model/stored-rows.js';
import { createThreadContextStore } from './thread-context-store.js';

export interface CreateAgentHistoryOptions {
  /** A Drizzle Postgres database (postgres-js, node-postgres, PGlite, …). */
  db: AgentHistoryDatabase;
  /** The tables, when they come from `defineAgentTables({ schema })`. @default the default instance */
  tables?: AgentTables;
  /**
   * The role every store transaction switches to (`set_config('role', …, true)`); the pool's login role must be
   * a member of it. `null` keeps the login role, which then must be subject to the policies itself.
   * @default 'agent_history_app'
   */
  appRole?: string | null;
  /** Counts tokens at write time. @default exact o200k (gpt-tokenizer) */
  tokenCounter?: TokenCounter | Promise<TokenCounter>;
  /** The largest message accepted, parts and metadata serialized. @default 1_048_576 (1 MiB) */
  maxMessageBytes?: number;
  /** How long a pending or streaming message belongs to its writer without a checkpoint. @default 60_000 ms */
  leaseMs?: number;
  /**
   * Write combining: appends that arrive while `maxInFlight` append statements are already running, or while their
   * thread has one in flight, are queued and sent together, one statement and one commit for many messages (same
   * guarantees as one by one: gapless sequences, idempotency, commit order). A lone append is never delayed.
   * `false` sends every append alone; so does a `db` that is a transaction.
   * @default { maxInFlight: 2, maxBatchSize: 64, maxBatchBytes: 4_194_304 }
   */
  appendBatching?: AppendBatchingOptions | false;
  /** @internal Test hooks: a clock and an id generator. */
  _internal?: {
    now?: () => Date;
    generateId?: () => string;
    onAppendBatchError?: (error: unknown, size: number) => void;
  };
}

/**
 * Creates the conversation store. Every operation goes through `forTenant(tenantId)`, which validates the tenant
 * id before any SQL and runs each call in its own transaction scoped to that tenant.
 *
 * @example
 * const history = createAgentHistory({ db });
 * const store = history.forTenant(tenantId);
 * const thread = await store.createThread({ userId: 'u1', title: 'Trip' });
 * await store.appendMessage(thread.id, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] });
 */
export function createAgentHistory({
  db,
  tables = defaultTables(),
  appRole = DEFAULT_APP_ROLE,
  tokenCounter: tokenCounterOption,
  maxMessageBytes = 1_048_576,
  leaseMs = 60_000,
  appendBatching,
  _internal = {},
}: CreateAgentHistoryOptions) {
  const now = _internal.now ?? (() => new Date());
  const tokenCounter = Promise.resolve(tokenCounterOption ?? loadO200kTokenCounter());
  const generateId = _internal.generateId ?? randomUUID;
  const statements = appendStatements(tables);
  const appendBatcher = createAppendBatcher(db, statements, appendBatching, {
    onBatchError: _internal.onAppendBatchError,
    now,
  });
  return {
    tables,
    tokenCounter,
    /** The store of one tenant. Throws `InvalidTenantError` for a missing or malformed tenant id. */
    forTenant(tenantId: string) {
      const context: StoreContext = {
        db,
        tables,
        tenantId: assertTenantId(tenantId),
        appRole,
        tokenCounter,
        maxMessageBytes,
        leaseMs,
        now,
        generateId,
        appendBatcher,
        appendStatements: statements,
      };
      return tenantHistory(context);
    },
  };
}

let defaults: AgentTables | undefined;
function defaultTables(): AgentTables {
  defaults ??= defineAgentTables();
  return defaults;
}

function tenantHistory(context: StoreContext) {
  // Every method is async, so bad input always arrives as a rejected promise, never as a synchronous throw
  // that escapes a `.catch()` chain (e.g. a fire-and-forget finalize in `onEnd`).
  return {
    tenantId: context.tenantId,
    // A failed statement or a lost connection becomes a DatabaseError, whose message holds no parameters.
    ...withStoreErrors({
      createThread: async (options?: CreateThreadOptions) => createThread(context, options),
      getThread: async (threadId: string) => getThread(context, threadId),
      listThreads: async (options?: ListThreadsOptions) => listThreads(context, options),
      renameThread: async (threadId: string, title: string | null) => updateThread(context, threadId, { title }),
      updateThreadMetadata: async (threadId: string, metadata: StoredMetadata) =>
        updateThread(context, threadId, { metadata }),
      softDeleteThread: async (threadId: string, options?: { actor?: string; reason?: string }) =>
        softDeleteThread(context, threadId, options),
      deleteThread: async (threadId: string, options?: { actor?: string; reason?: string }) =>
        deleteThread(context, threadId, options),
      forkThread: async (
        threadId: string,
        options: { atSequence: number; id?: string; title?: string; userId?: string },
      ) => forkThread(context, threadId, options),

      startRun: async (threadId: string, options?: StartRunOptions) => startRun(context, threadId, options),
      finishRun: async (runId: string, options: FinishRunOptions) => finishRun(context, runId, options),
      failRun: async (runId: string, error: unknown, usage?: RunUsage) => failRun(context, runId, error, usage),
      getRun: async (runId: string) => getRun(context, runId),

      appendMessage: async <UI_MESSAGE extends StorableMessage>(
        threadId: string,
        message: UI_MESSAGE,
        options?: AppendMessageOptions,
      ) => appendMessage(context, threadId, message, options),
      beginAssistantMessage: async (threadId: string, options: BeginAssistantMessageOptions) =>
        beginAssistantMessage(context, threadId, options),
      checkpointMessage: async (
        threadId: string,
        messageId: string,
        update: { parts: StoredMessagePart[]; metadata?: StoredMetadata },
      ) => checkpointMessage(context, threadId, messageId, update),
      finalizeMessage: async (
        threadId: string,
        messageId: string,
        update: { status: FinalStatus; parts: StoredMessagePart[]; metadata?: StoredMetadata },
      ) => finalizeMessage(context, threadId, messageId, update),
      recoverAbandonedMessages: async () => recoverAbandonedMessages(context),
      excludeMessages: async (threadId: string, messageIds: string[], options: ExcludeMessagesOptions) =>
        excludeMessages(context, threadId, messageIds, options),
      includeMessages: async (threadId: string, messageIds: string[], options?: { actor?: string; reason?: string }) =>
        includeMessages(context, threadId, messageIds, options),
      pinMessage: async (threadId: string, messageId: string, pinned?: boolean) =>
        pinMessage(context, threadId, messageId, pinned),
      getMessage: async (threadId: string, messageId: string) => getMessage(context, threadId, messageId),
      listMessages: async (threadId: string, options?: ListMessagesOptions) => listMessages(context, threadId, options),
      searchMessages: async (query: string, options?: SearchMessagesOptions) => searchMessages(context, query, options),
      redactMessage: async (threadId: string, messageId: string, options: RedactMessageOptions) =>
        redactMessage(context, threadId, messageId, options),
      deleteThreadsOlderThan: async (options: RetentionOptions) => deleteThreadsOlderThan(context, options),

      loadContext: async (threadId: string, options?: { maxTailMessages?: number }) =>
        loadContext(context, threadId, options),
      writeSummary: async (threadId: string, input: NewSummary) => writeSummary(context, threadId, input),
      writeSnapshot: async (threadId: string, input: NewSnapshot) => writeSnapshot(context, threadId, input),
      listSummaries: async (threadId: string) => listSummaries(context, threadId),
    }),
    /** The context engine's persistence for one thread: pass it as `createContextManager({ store })`. */
    contextStore: (threadId: string, options?: { maxTailMessages?: number }) =>
      withStoreErrors(createThreadContextStore(context, threadId, options)),
  };
}

/** The store of one tenant, as returned by `forTenant`. */
export type TenantHistory = ReturnType<typeof tenantHistory>;
/** The store, as returned by {@link createAgentHistory}. */
export type AgentHistory = ReturnType<typeof createAgentHistory>;
