/**
 * The search indexing of a store with `search: 'background'`: its writes store no vector and note their tenant; once
 * the store has written nothing for `idleMs` (or `maxDelayMs` after the oldest note not indexed yet, so that a store
 * that never idles still indexes), it indexes every pending message of each noted tenant in batches
 * (`indexPendingMessages`, which any process's rows of the tenant reach too), one tenant and one batch at a time, off
 * the append path and off every thread's lock. A tenant noted while its batches run stays noted. A failed batch is
 * reported and its tenant dropped until its next write: the rows stay pending, and `searchMessages` finds them as
 * exactly as indexed ones. Internal.
 */
export interface SearchDrain {
  /** A write of `tenantId` may have left messages without a vector. */
  note(tenantId: string): void;
  /** Indexes every noted tenant now and resolves when none is noted (rejects with the first failure). */
  drain(): Promise<void>;
}

/** How a {@link SearchDrain} indexes, when, and where its failures go. */
export interface SearchDrainOptions {
  /** Indexes up to `limit` of a tenant's pending messages in one statement; resolves how many it indexed. */
  indexTenant: (tenantId: string, limit: number) => Promise<number>;
  /** A failed batch of the timer's drain (an explicit `drain()` rejects instead). */
  onError: (error: unknown, tenantId: string) => void;
  /** Quiet time before a drain. @default 50 */
  idleMs?: number;
  /** The longest a note waits for a drain, however busy the store. @default 1000 */
  maxDelayMs?: number;
  /** Messages per statement. @default 500 */
  batchSize?: number;
  now?: () => number;
}

/** A drain over `indexTenant` (see {@link SearchDrain}). */
export function createSearchDrain({
  indexTenant,
  onError,
  idleMs = 50,
  maxDelayMs = 1000,
  batchSize = 500,
  now = () => performance.now(),
}: SearchDrainOptions): SearchDrain {
  const noted = new Set<string>();
  /** When the latest note came, and the oldest one not drained yet (null when none is). */
  let lastNote = 0;
  let oldestNote: number | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<unknown> | null = null;

  const arm = () => {
    if (timer !== undefined || running !== null || oldestNote === null) return;
    const wait = Math.max(0, Math.min(lastNote + idleMs, oldestNote + maxDelayMs) - now());
    timer = setTimeout(fire, wait);
    (timer as { unref?: () => void }).unref?.(); // pending vectors never keep a process alive: search is exact without
  };

  const fire = () => {
    timer = undefined;
    const at = now();
    if (oldestNote === null) return;
    if (at - lastNote < idleMs && at - oldestNote < maxDelayMs) return arm();
    void start((error, tenantId) => onError(error, tenantId));
  };

  /** Drains every noted tenant; failures go to `failed`. */
  const start = (failed: (error: unknown, tenantId: string) => void) => {
    const run = (async () => {
      oldestNote = null;
      while (noted.size > 0) {
        const tenantId = noted.values().next().value as string;
        noted.delete(tenantId);
        try {
          while ((await indexTenant(tenantId, batchSize)) >= batchSize);
        } catch (error) {
          try {
            failed(error, tenantId);
          } catch {
            // A reporter that throws must not stop the other tenants, nor reach the app as an unhandled rejection.
          }
        }
      }
    })();
    running = run.finally(() => {
      running = null;
      arm();
    });
    return running;
  };

  return {
    note(tenantId) {
      noted.add(tenantId);
      lastNote = now();
      oldestNote ??= lastNote;
      arm();
    },
    async drain() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      while (running !== null) await running.catch(() => undefined);
      const failures: unknown[] = [];
      await start((error) => failures.push(error));
      if (failures.length > 0) throw failures[0];
    },
  };
}

/**
 * The drain of a store with `search: 'background'`, indexing through the store's own tenant stores (the application
 * role, the tenant's row-level security, the call's span). A failure is reported to `onSearchDrainError` when given;
 * the failed call's span has recorded it either way, and its rows stay pending, and searchable.
 */
export function storeSearchDrain(
  // The store's `forTenant`, by shape: naming the store's type here would make an import cycle through its context.
  history: {
    forTenant(tenantId: string): { indexPendingMessages(options: { limit: number }): Promise<{ indexed: number }> };
  },
  {
    searchDrain,
    onSearchDrainError = () => undefined,
  }: {
    searchDrain?: Pick<SearchDrainOptions, 'idleMs' | 'maxDelayMs' | 'batchSize'>;
    onSearchDrainError?: SearchDrainOptions['onError'];
  },
): SearchDrain {
  return createSearchDrain({
    ...searchDrain,
    indexTenant: async (tenantId, limit) => (await history.forTenant(tenantId).indexPendingMessages({ limit })).indexed,
    onError: onSearchDrainError,
  });
}
