import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { createAgentHistory, type AgentHistory } from '../../../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../../../src/tenant/database.js';

/**
 * The application's pool and store, replaceable the way a crashed process is restarted. A fault suite replaces
 * it after the driver's known uncaught exception (see known-driver-faults.ts), which leaves postgres-js
 * connections unable to reconnect; the store's guarantees must hold across the replacement.
 */
export interface ReplaceablePool {
  readonly history: AgentHistory;
  /** How many pools have been opened (1 + replacements). */
  readonly generation: number;
  /**
   * Opens a new pool and abandons the old one, at most once per 500 ms: a call within 500 ms of the last replacement
   * replaces once more when the 500 ms are up (the crash may have been the new pool's, which would otherwise stay
   * broken and hang every later call).
   */
  replace(): void;
  end(): Promise<void>;
}

export function openReplaceablePool(url: string, { max = 8 }: { max?: number } = {}): ReplaceablePool {
  // fetch_types off: postgres-js 3.4.9 drops the promise of its start-up type query, so a backend terminated
  // during it becomes an unhandled rejection (porsager/postgres#1192, #1205, #1223). A short reconnect backoff,
  // so that hundreds of kills do not push the driver's exponential backoff to its 20 s ceiling.
  const open = () =>
    postgres(url, { max, onnotice: () => {}, connect_timeout: 5, fetch_types: false, backoff: () => 0.02 });
  let client = open();
  let history = createAgentHistory({ db: drizzle({ client }) as unknown as AgentHistoryDatabase });
  let generation = 1;
  let replacedAt = 0;
  let pending: NodeJS.Timeout | undefined;
  const abandoned: postgres.Sql[] = [];
  const pool: ReplaceablePool = {
    get history() {
      return history;
    },
    get generation() {
      return generation;
    },
    replace() {
      const since = performance.now() - replacedAt;
      if (since < 500) {
        pending ??= setTimeout(() => {
          pending = undefined;
          pool.replace();
        }, 500 - since);
        return;
      }
      replacedAt = performance.now();
      // Close the old pool now, so its connections do not pile up on the server.
      const old = client;
      abandoned.push(old);
      old.end({ timeout: 0 }).catch(() => {});
      client = open();
      history = createAgentHistory({ db: drizzle({ client }) as unknown as AgentHistoryDatabase });
      generation++;
    },
    async end() {
      clearTimeout(pending);
      await Promise.allSettled([client, ...abandoned].map((sql) => sql.end({ timeout: 0 })));
    },
  };
  return pool;
}
