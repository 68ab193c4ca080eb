import { randomUUID } from 'node:crypto';
import { DEFAULT_APP_ROLE } from '../schema/define-agent-tables.js';
import { defaultTables } from './default-tables.js';
import { assertTenantId } from '../tenant/tenant-id.js';
import { rejectAsStoreError } from './with-store-errors.js';
import { createAppendBatcher } from './append-batcher.js';
import { createAppendLanes } from './append-lanes.js';
import { appendStatements } from './append-statements.js';
import { assertSearchIndexing } from './search-indexing.js';
import { storeSearchDrain } from './search-drain.js';
import { tenantHistory } from './tenant-history-methods.js';
import type { StoreContext } from './store-context.js';
import { loadO200kTokenCounter, scopeTokenCounter } from '../tokens/token-counter.js';
import { onceSetupCheck } from './check-setup.js';
import type { AgentHistory, ForTenantOptions } from './agent-history.js';
import { getTableConfig, PgTransaction } from 'drizzle-orm/pg-core';
import { is } from 'drizzle-orm';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { assertOptionalUserId } from '../errors/assert-input.js';
import type { CreateAgentHistoryOptions } from './create-agent-history-options.js';
import {
  createContextMessageCache,
  type ContextMessageCacheOptions,
  type SharedContextMessageCache,
} from '../tokens/context-message-cache.js';

export type { CreateAgentHistoryOptions } from './create-agent-history-options.js';

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
  checkMessage,
  oversizedToolPayloads = {},
  leaseMs = 60_000,
  appendBatching,
  rowLevelSecurityCheck = 'refuse',
  search = 'inline',
  contextCache = {},
  _internal = {},
}: CreateAgentHistoryOptions): AgentHistory {
  assertDatabase(db);
  assertSearchIndexing(search);
  if (search === 'background' && is(db, PgTransaction)) search = 'inline'; // as a transaction's store: see historyOver
  const shared: SharedSetup = {
    tables,
    appRole,
    rowLevelSecurityCheck,
    tokenCounter: Promise.resolve(tokenCounterOption ?? loadO200kTokenCounter()),
    maxMessageBytes,
    checkMessage,
    oversizedToolPayloads,
    leaseMs,
    appendBatching,
    search,
    now: _internal.now ?? (() => new Date()),
    generateId: _internal.generateId ?? randomUUID,
    onAppendBatchError: _internal.onAppendBatchError,
    appendStatements: appendStatements(tables, search !== 'inline'),
    schema: getTableConfig(tables.agentThread).schema ?? 'public',
    oneStatementReads: { available: true },
    contextCache: contextCacheOf(contextCache),
    setup: { passed: false, warned: false },
    searchDrain: null,
  };
  // A store over a transaction keeps no messages in a cache (see `historyOver`).
  if (is(db, PgTransaction)) shared.contextCache = null;
  const history = historyOver(db, shared, false);
  if (search === 'background') shared.searchDrain = storeSearchDrain(history, _internal);
  return history;
}

/** What a store and the stores of its transactions (`withTransaction`) share: the options, checked once. */
type SharedSetup = Pick<
  StoreContext,
  | 'tables'
  | 'schema'
  | 'appRole'
  | 'maxMessageBytes'
  | 'checkMessage'
  | 'oversizedToolPayloads'
  | 'leaseMs'
  | 'now'
  | 'generateId'
  | 'appendStatements'
  | 'oneStatementReads'
  | 'search'
  | 'searchDrain'
  | 'contextCache'
> & {
  rowLevelSecurityCheck: NonNullable<CreateAgentHistoryOptions['rowLevelSecurityCheck']>;
  /** The counter, before it is scoped to a tenant. */
  tokenCounter: Promise<TokenCounter>;
  appendBatching: CreateAgentHistoryOptions['appendBatching'];
  onAppendBatchError: ((error: unknown, size: number) => void) | undefined;
  /**
   * `passed`: the store's own check (on `db`) passed, or warned; its transactions' stores then skip theirs. A check
   * on a transaction never counts for the store: the transaction may run as another role (`SET LOCAL ROLE`) or see
   * catalog changes of its own that roll back. `warned`: the one warning of `rowLevelSecurityCheck: 'warn'` was given.
   */
  setup: { passed: boolean; warned: boolean };
};

/**
 * The store over `db`: the database, or (`inTransaction`) one of its transactions, whose store skips the setup check
 * once the database's store passed it (unless `appRole` is null: the role then is whatever the transaction runs as),
 * keeps no messages in the shared cache, since the transaction may roll back what it would put there, and indexes
 * search inline where the store would in the background (a drain could not see its rows before the commit).
 */
function historyOver(db: AgentHistoryDatabase, shared: SharedSetup, inTransaction: boolean): AgentHistory {
  const { rowLevelSecurityCheck, tokenCounter, appendBatching, onAppendBatchError, setup, ...common } = shared;
  const { tables, appRole } = common;
  const inline = inTransaction && common.search === 'background';
  if (inline) Object.assign(common, { search: 'inline', appendStatements: appendStatements(tables, false) });
  const appendBatcher = createAppendBatcher(db, common.appendStatements, appendBatching, {
    onBatchError: onAppendBatchError,
  });
  const appendLanes = createAppendLanes();
  const warnOnce = (message: string) => {
    if (setup.warned) return;
    setup.warned = true;
    console.warn(message);
  };
  const checkOnce = onceSetupCheck(db, tables, appRole, rowLevelSecurityCheck, warnOnce);
  const checkRowLevelSecurity = async () => {
    if (setup.passed && !(inTransaction && appRole === null)) return;
    await checkOnce();
    if (!inTransaction) setup.passed = true;
  };
  return {
    tables,
    tokenCounter,
    ready: async () => checkRowLevelSecurity().catch(rejectAsStoreError),
    withTransaction(tx) {
      if (typeof tx !== 'object' || tx === null || Object.getPrototypeOf(tx) === null || !is(tx, PgTransaction))
        throw new InvalidArgumentError({
          argument: 'tx',
          value: tx,
          message: 'expected a Drizzle transaction, as db.transaction(async (tx) => …) passes it.',
        });
      return historyOver(tx, shared, true);
    },
    // Read when called: the drain is made after the store it indexes through.
    drainSearch: async () => (inTransaction ? undefined : shared.searchDrain?.drain().catch(rejectAsStoreError)),
    forTenant(tenantId, options) {
      const tenant = assertTenantId(tenantId);
      const userId = forTenantUserId(options);
      const context: StoreContext = {
        ...common,
        db,
        tenantId: tenant,
        userId,
        // Cached counts per tenant: no tenant can time whether another one stored a text.
        tokenCounter: tokenCounter.then((counter) => scopeTokenCounter(counter, tenant)),
        appendBatcher,
        appendLanes,
        checkRowLevelSecurity,
        contextCache: inTransaction ? null : common.contextCache,
        searchDrain: inline ? null : shared.searchDrain,
      };
      return tenantHistory(context);
    },
  };
}

/** The `contextCache` option, checked: `false`, a cache (`createContextMessageCache`), or the options of one. */
function contextCacheOf(option: unknown): SharedContextMessageCache | null {
  if (option === false) return null;
  if (typeof (option as SharedContextMessageCache | null)?.scoped === 'function')
    return option as SharedContextMessageCache;
  if (typeof option !== 'object' || option === null || Array.isArray(option))
    throw new InvalidArgumentError({
      argument: 'contextCache',
      value: option,
      message: 'expected false, { maxBytes? } or a cache from createContextMessageCache().',
    });
  try {
    return createContextMessageCache(option as ContextMessageCacheOptions);
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      throw new InvalidArgumentError({
        argument: 'contextCache.maxBytes',
        value: (option as ContextMessageCacheOptions).maxBytes,
        message: 'expected a non-negative integer (bytes).',
      });
    throw error;
  }
}

/** `db` is a Drizzle database or transaction (not the driver's client, a common slip), checked before any call. */
function assertDatabase(db: unknown): void {
  const drizzleShaped = (candidate: { transaction?: unknown; execute?: unknown }) =>
    typeof candidate.transaction === 'function' && typeof candidate.execute === 'function';
  // Drizzle's `is` reads the prototype's constructor: an object without a prototype is no Drizzle database either.
  if (typeof db !== 'object' || db === null || Object.getPrototypeOf(db) === null || !drizzleShaped(db))
    throw new InvalidArgumentError({
      argument: 'db',
      value: db,
      message: 'expected a Drizzle Postgres database, as drizzle({ client }) returns it, or one of its transactions.',
    });
  // A postgres-js client that transforms what it reads (`transform: postgres.camel`) renames the columns the store
  // reads by name, and the keys inside every json value: messages would come back changed, fields as null.
  const transform = (db as { $client?: { options?: { transform?: Record<string, { from?: unknown } | undefined> } } })
    .$client?.options?.transform;
  const reading = ['column', 'value', 'row'].filter((kind) => typeof transform?.[kind]?.from === 'function');
  if (reading.length > 0)
    throw new InvalidArgumentError({
      argument: 'db',
      value: `a postgres-js client with transform.${reading.join(', transform.')}`,
      message: 'the store reads columns by name and keeps json as it was written; make its client without transform.',
    });
}

/** The user scope of `forTenant`, checked: a string of 1 to 200 characters, or null for the whole tenant. */
function forTenantUserId(options: ForTenantOptions | undefined): string | null {
  if (options === undefined) return null;
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError({ argument: 'options', value: options, message: 'expected { userId? }.' });
  // No `userId` key asks for the tenant-wide store; a key holding undefined (`{ userId: session.user?.id }` without a
  // user) is refused like null, so that a missing user never widens the store to the whole tenant.
  if (!('userId' in options)) return null;
  const userId = assertOptionalUserId('options.userId', options.userId);
  if (userId === null || userId.length === 0)
    throw new InvalidArgumentError({
      argument: 'options.userId',
      value: options.userId,
      message: 'expected a string of 1 to 200 characters.',
    });
  return userId;
}

// Re-exported where they were defined before they had files of their own, so existing imports keep working.
export type { AgentHistory, ForTenantOptions } from './agent-history.js';
export type { TenantHistory } from './tenant-history.js';
