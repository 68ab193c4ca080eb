import type { AgentTables } from '../schema/define-agent-tables.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { TenantHistory } from './tenant-history.js';
import type { AgentHistoryDatabase } from '../tenant/database.js';

/**
 * The store, as `createAgentHistory` returns it. Everything goes through `forTenant(tenantId)`; the tables
 * and the token counter are exposed so the context engine counts tokens exactly as the store did at write time.
 *
 * @example
 * const history = createAgentHistory({ db });
 * const store = history.forTenant(tenantId);
 */
export interface AgentHistory {
  /** The tables the store reads and writes: the `tables` option, or the default instance. */
  readonly tables: AgentTables;
  /** The token counter messages are counted with at write time (loaded once, lazily). */
  readonly tokenCounter: Promise<TokenCounter>;
  /**
   * Runs the store's start-up check now (it otherwise runs before the first call): the migrations ran, the login may
   * switch to the application role and call the package's functions, and row-level security holds for that role.
   * Await it when your app boots, so a missing grant fails the boot, not the first request. Checked once.
   *
   * @throws {DatabaseSetupError} The database is not set up for the login; each problem names its fix.
   * @throws {RowLevelSecurityBypassError} Row-level security would not hold (unless `rowLevelSecurityCheck: 'warn'`).
   * @throws {DatabaseError} The database could not be reached (checked again on the next call).
   * @example
   * const history = createAgentHistory({ db });
   * await history.ready();
   */
  ready(): Promise<void>;
  /**
   * The same store over `tx`, one of your transactions on the same database and login, so that its calls commit or
   * roll back with your own statements. Options and token counter are shared with this store, and so is the
   * start-up check: once this store passed it (`ready()`, or a call outside a transaction), a transaction's store
   * skips it, where `createAgentHistory({ db: tx })` checks the database in every transaction. Until then (and
   * always with `appRole: null`) each transaction's store checks on its transaction, and its pass counts for it
   * alone. A transaction's store keeps no messages in the context cache: the transaction may roll back. Each call
   * puts your transaction's settings back as they were (see `createAgentHistory`).
   *
   * @throws {InvalidArgumentError} `tx` is not a Drizzle transaction (synchronously).
   * @example
   * await db.transaction(async (tx) => {
   *   await tx.insert(orders).values(order);
   *   await history.withTransaction(tx).forTenant(tenantId).appendMessage(threadId, message);
   * });
   */
  withTransaction(tx: AgentHistoryDatabase): AgentHistory;
  /**
   * The store of one tenant. Validates the tenant id before any SQL; every method of the result runs in its own
   * transaction scoped to that tenant. With `userId`, also scoped to that user by row-level security: only the
   * user's own threads (and their messages, runs, summaries, snapshots and audit events) are visible or writable;
   * another user's thread is "not found", exactly like another tenant's. Without the `userId` key, the whole tenant
   * (admin tools, background jobs); `{ userId: undefined }` is refused like `null`, so a missing user fails closed.
   *
   * @throws {InvalidTenantError} `tenantId` is missing or not a uuid (synchronously).
   * @throws {InvalidArgumentError} `options.userId` is present and not a string of 1 to 200 characters, undefined
   * included (synchronously).
   * @example
   * const store = history.forTenant(session.tenantId, { userId: session.userId });
   */
  forTenant(tenantId: string, options?: ForTenantOptions): TenantHistory;
  /**
   * With `search: 'background'`, indexes now every message the store's writes left without a search vector (each
   * tenant it wrote to, every pending message of the tenant), instead of once the store is idle; resolves when none
   * is left. Call it where the process may stop before it idles: a serverless function's after-response hook, a shutdown.
   * Resolves at once in every other mode, and in a transaction's store (`withTransaction`), which indexes inline.
   *
   * @throws {DatabaseError} A batch failed (the others still ran); its rows stay pending and searchable.
   * @example
   * after(() => history.drainSearch());
   */
  drainSearch(): Promise<void>;
}

/** The options of `forTenant`. */
export interface ForTenantOptions {
  /**
   * The user every call acts for, enforced by row-level security (`app.user_id`). Threads it creates belong to
   * it. @default none: the whole tenant
   */
  userId?: string;
}
