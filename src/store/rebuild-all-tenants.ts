import type { AgentHistory } from './agent-history.js';
import type { RebuildDerivedDataOptions, RebuildResult } from './rebuild-derived-data.js';

/**
 * Runs `rebuildDerivedData` for every tenant the app lists, one tenant after another, each through the app login
 * and its row-level security (the store cannot list tenants it is not scoped to: the app's own tenant table is the
 * list). Stops at the first error; run it again to continue (each tenant resumes by its version markers).
 *
 * @example
 * for await (const t of rebuildAllTenants(history, tenantIds, { summaryPolicyVersion: 'v3' })) console.log(t);
 */
export async function* rebuildAllTenants(
  history: AgentHistory,
  tenantIds: Iterable<string> | AsyncIterable<string>,
  options: RebuildDerivedDataOptions = {},
): AsyncGenerator<{ tenantId: string } & RebuildResult> {
  for await (const tenantId of tenantIds) {
    options.signal?.throwIfAborted();
    const store = history.forTenant(tenantId);
    yield { tenantId: store.tenantId, ...(await store.rebuildDerivedData(options)) };
  }
}
