import type { AgentTables } from '../schema/define-agent-tables.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { TenantHistory } from './tenant-history.js';

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
   * The store of one tenant. Validates the tenant id before any SQL; every method of the result runs in its own
   * transaction scoped to that tenant.
   *
   * @throws {InvalidTenantError} `tenantId` is missing or not a uuid (synchronously).
   * @example
   * const store = history.forTenant(session.tenantId);
   */
  forTenant(tenantId: string): TenantHistory;
}
