import { context as otelContext, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * The search indexing of a store with `search: 'background'`: its writes store no vector and note their tenant; once
 * the store has written nothing for `idleMs` (or `maxDelayMs` after the oldest note not indexed yet, so that a store
 * that never idles still indexes), it indexes the pending messages of each noted tenant in batches
 * (`indexPendingMessages`, which any process's rows of the tenant reach too), one run, one tenant and one batch at a
 * time, off the append path and off every thread's lock. A tenant noted while its batches run stays noted. A failed
 * batch is reported and its tenant left for its next write or `drain()`: the rows stay pending, and `searchMessages`
 * finds them as exactly as indexed ones. Internal.
 */
export interface SearchDrain {
  /** A write of `tenantId` may have left messages without a vector. */
  note(tenantId: string): void;
  /**
   * Indexes every noted tenant, and every tenant whose batch failed since, now; resolves when none is left, after
   * any run already going (rejects with the first failure).
   */
  drain(): Promise<void>;
}

/** How a {@link SearchDrain} indexes, when, and where its failures go. */
export interface SearchDrainOptions {
  /**
   * Indexes up to `limit` of a tenant's pending messages in one statement; resolves how many it indexed and whether
   * any is left (beyond the limit, or held by another transaction).
   */
  indexTenant: (tenantId: string, limit: number) => Promise<{ indexed: number; remaining: boolean }>;
  /** A failed batch of the timer's drain (an explicit `drain()` rejects instead). */
  onError: (error: unknown, tenantId: string) => void;
  /** Quiet time before a drain. @default 50 */
  idleMs?: number;
  /** The longest a note waits for a drain, however busy the store. @default 1000 */
  maxDelayMs?: number;
  /**
   * Messages per statement, each locked until it commits: a write to one of them (a redaction, a reopen) waits for
   * the batch. @default 100
   */
  batchSize?: number;
}

/** A drain over `indexTenant` (see {@link SearchDrain}). */
export function createSearchDrain(options: SearchDrainOptions): SearchDrain {
  const drain = new Drain(options);
  return { note: (tenantId) => drain.note(tenantId), drain: async () => drain.drainNow() };
}

class Drain {
  private readonly noted = new Set<string>();
  /** Tenants whose batch failed: not retried by the timer (no loop against a database that is gone), but by drain(). */
  private readonly failed = new Set<string>();
  /**
   * Tenants whose rows left were all held by other transactions (a redaction, an exclusion, which may commit them
   * still pending): tried again after a pause that doubles while they stay held (up to a minute), and by drain().
   */
  private readonly held = new Set<string>();
  private heldPause = 0;
  private heldTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the latest note came, and the oldest one not drained yet (null when none is). */
  private lastNote = 0;
  private oldestNote: number | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The run going, if any: never two at once. It resolves how many tenants it left held by other transactions. */
  private running: Promise<number> | null = null;
  private readonly idleMs: number;
  private readonly maxDelayMs: number;
  private readonly batchSize: number;

  constructor(private readonly options: SearchDrainOptions) {
    this.idleMs = options.idleMs ?? 50;
    this.maxDelayMs = options.maxDelayMs ?? 1000;
    this.batchSize = options.batchSize ?? 100;
  }

  note(tenantId: string): void {
    this.noted.add(tenantId);
    this.failed.delete(tenantId);
    this.held.delete(tenantId);
    this.lastNote = performance.now();
    this.oldestNote ??= this.lastNote;
    this.arm();
  }

  async drainNow(): Promise<void> {
    const failures: unknown[] = [];
    for (let pause = 5; ; pause = Math.min(pause * 2, 1000)) {
      // Waits for the run going (the timer may be re-armed by its end: cleared after each), then starts its own
      // with no await between the check and the start: never two runs at once.
      for (;;) {
        if (this.timer !== undefined) clearTimeout(this.timer);
        this.timer = undefined;
        if (this.running === null) break;
        await this.running;
      }
      for (const tenantId of [...this.failed, ...this.held]) this.noted.add(tenantId);
      this.failed.clear();
      this.held.clear();
      const held = await this.start((error) => failures.push(error));
      if (failures.length > 0) throw failures[0];
      if (held === 0) return;
      // Rows held by another transaction: waits longer each time (up to a second) for it to commit.
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  private arm(): void {
    if (this.timer !== undefined || this.running !== null || this.oldestNote === null) return;
    const due = Math.min(this.lastNote + this.idleMs, this.oldestNote + this.maxDelayMs);
    this.timer = setTimeout(() => this.fire(), Math.max(0, due - performance.now()));
    // Pending vectors never keep a process alive: search is exact without them.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    const at = performance.now();
    if (this.running !== null || this.oldestNote === null) return; // the run going re-arms when it ends
    if (at - this.lastNote < this.idleMs && at - this.oldestNote < this.maxDelayMs) return this.arm();
    // Outside the trace of the write whose call armed the timer: the drain serves every request of every tenant.
    otelContext.with(ROOT_CONTEXT, () => void this.start(this.options.onError));
  }

  /**
   * Runs every noted tenant's batches until none is left; each failure goes to `report`, its tenant to `failed`, and a
   * tenant whose rows left are all held by other transactions to `held`. Resolves how many were held.
   */
  private start(report: (error: unknown, tenantId: string) => void): Promise<number> {
    const run = (async () => {
      this.oldestNote = null;
      const held = new Set<string>();
      while (this.noted.size > 0) {
        const tenantId = this.noted.values().next().value as string;
        this.noted.delete(tenantId);
        try {
          if ((await this.indexAll(tenantId)) === 'held') held.add(tenantId);
        } catch (error) {
          this.failed.add(tenantId);
          reportSafely(report, error, tenantId);
        }
      }
      for (const tenantId of held) this.held.add(tenantId);
      this.retryHeld();
      return held.size;
    })();
    const current: Promise<number> = run.finally(() => {
      if (this.running === current) this.running = null;
      this.arm();
    });
    this.running = current;
    return current;
  }

  private retryHeld(): void {
    if (this.held.size === 0) this.heldPause = 0;
    if (this.held.size === 0 || this.heldTimer !== undefined) return;
    this.heldPause = Math.min(Math.max(this.heldPause * 2, this.idleMs), 60_000);
    this.heldTimer = setTimeout(() => {
      this.heldTimer = undefined;
      const tenants = [...this.held];
      this.held.clear();
      for (const tenantId of tenants) this.note(tenantId);
    }, this.heldPause);
    (this.heldTimer as { unref?: () => void }).unref?.();
  }

  /** A tenant's batches, until none is left or every one left is held by another transaction. */
  private async indexAll(tenantId: string): Promise<'done' | 'held'> {
    for (;;) {
      const { indexed, remaining } = await this.options.indexTenant(tenantId, this.batchSize);
      if (!remaining) return 'done';
      if (indexed === 0) return 'held';
    }
  }
}

/** A reporter that throws must not stop the other tenants, nor reach the app as an unhandled rejection. */
function reportSafely(report: (error: unknown, tenantId: string) => void, error: unknown, tenantId: string): void {
  try {
    report(error, tenantId);
  } catch {
    // dropped: see above
  }
}

/**
 * The drain of a store with `search: 'background'`, indexing through the store's own tenant stores (the application
 * role, the tenant's row-level security, the call's span). A failure is reported to `onSearchDrainError` when given; the
 * failed call's span has recorded it either way, and its rows stay pending, and searchable.
 */
export function storeSearchDrain(
  // The store's `forTenant`, by shape: naming the store's type here would make an import cycle through its context.
  history: {
    forTenant(tenantId: string): {
      indexPendingMessages(options: { limit: number }): Promise<{ indexed: number; remaining: boolean }>;
    };
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
    indexTenant: async (tenantId, limit) => history.forTenant(tenantId).indexPendingMessages({ limit }),
    onError: onSearchDrainError,
  });
}
