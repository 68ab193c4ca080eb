import { describe, expect, it } from 'vitest';
import { createSearchDrain, type SearchDrainOptions } from '../../src/store/search-drain.js';

// The drain's scheduling against a tenant-by-tenant count of pending messages (what `indexPendingMessages` does to
// them is tested on the databases in search-background.test.ts). Real timers, short waits.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Pending messages per tenant, indexed `limit` at a time; each call logged. `held` of them are held by another
 * transaction: skipped, but counted as remaining.
 */
function pendingRows(initial: Record<string, number> = {}) {
  const pending = new Map(Object.entries(initial));
  const held = new Map<string, number>();
  const calls: Array<{ tenantId: string; limit: number; at: number }> = [];
  const failing = new Set<string>();
  const indexTenant: SearchDrainOptions['indexTenant'] = async (tenantId, limit) => {
    calls.push({ tenantId, limit, at: performance.now() });
    await sleep(1);
    if (failing.has(tenantId)) throw new Error(`connection lost while indexing ${tenantId}`);
    const left = pending.get(tenantId) ?? 0;
    const free = left - (held.get(tenantId) ?? 0);
    const indexed = Math.min(free, limit);
    pending.set(tenantId, left - indexed);
    return { indexed, remaining: left - indexed > 0 };
  };
  const write = (tenantId: string, messages = 1) => pending.set(tenantId, (pending.get(tenantId) ?? 0) + messages);
  return { pending, held, calls, failing, indexTenant, write };
}

/** A drain of two noted tenants with 4 pending messages each, whose batches fail for tenant `a`. */
function aFailingBesideB(onError: SearchDrainOptions['onError']) {
  const rows = pendingRows();
  const drain = createSearchDrain({ indexTenant: rows.indexTenant, onError, idleMs: 5, batchSize: 10 });
  rows.failing.add('a');
  rows.write('a', 4);
  rows.write('b', 4);
  drain.note('a');
  drain.note('b');
  return { rows, drain };
}

describe('the background search drain', () => {
  it('should index every noted tenant in batches once the writes stop, and not before', async () => {
    const rows = pendingRows();
    const errors: unknown[] = [];
    const idleMs = 500; // far above the writes' 10 ms gaps, however loaded the machine
    const drain = createSearchDrain({
      indexTenant: rows.indexTenant,
      onError: (error) => errors.push(error),
      idleMs,
      maxDelayMs: 60_000,
      batchSize: 3,
    });
    const started = performance.now();
    let lastWrite = started;
    let writes = 0;
    // Writes every 10 ms for 200 ms: never quiet for idleMs, so nothing is indexed while they go on.
    while (performance.now() - started < 200) {
      rows.write('a', 2);
      rows.write('b');
      drain.note('a');
      drain.note('b');
      lastWrite = performance.now();
      writes++;
      await sleep(10);
    }
    expect(rows.calls).toEqual([]);
    await expect.poll(() => [rows.pending.get('a'), rows.pending.get('b')]).toEqual([0, 0]);
    expect(rows.calls[0]!.at - lastWrite).toBeGreaterThanOrEqual(idleMs - 2);
    expect(new Set(rows.calls.map((call) => call.limit))).toEqual(new Set([3]));
    // Whole batches until none is left: no call more than that for a tenant.
    const callsOf = (tenant: string) => rows.calls.filter((call) => call.tenantId === tenant).length;
    expect(callsOf('b')).toBe(Math.ceil(writes / 3));
    expect(errors).toEqual([]);
  });

  it('should index at the latest maxDelayMs after a note, however busy the store', async () => {
    const rows = pendingRows();
    const drain = createSearchDrain({
      indexTenant: rows.indexTenant,
      onError: () => {},
      idleMs: 60_000,
      maxDelayMs: 50,
      batchSize: 100,
    });
    const started = performance.now();
    while (performance.now() - started < 400) {
      rows.write('a');
      drain.note('a');
      await sleep(5);
    }
    const stopped = performance.now();
    // Drains ran while the writes never paused (never 60 s quiet), more than one: each note waits at most the delay.
    expect(rows.calls.filter((call) => call.at < stopped).length).toBeGreaterThanOrEqual(2);
    await expect.poll(() => rows.pending.get('a')).toBe(0);
  });

  it('should keep a tenant noted while its batches run, and index what was written meanwhile', async () => {
    const rows = pendingRows();
    const drain = createSearchDrain({
      indexTenant: async (tenantId, limit) => {
        const indexed = await rows.indexTenant(tenantId, limit);
        // A write lands while this batch runs: the drain must come back for it.
        if (rows.calls.length === 1) {
          rows.write(tenantId, 5);
          drain.note(tenantId);
        }
        return indexed;
      },
      onError: () => {},
      idleMs: 5,
      batchSize: 10,
    });
    rows.write('a', 2);
    drain.note('a');
    await expect.poll(() => rows.calls.length).toBeGreaterThanOrEqual(2);
    await expect.poll(() => rows.pending.get('a')).toBe(0);
  });

  it('should report a failed batch, leave its tenant until its next write, and still index the others', async () => {
    const errors: Array<{ error: unknown; tenantId: string }> = [];
    const { rows, drain } = aFailingBesideB((error, tenantId) => errors.push({ error, tenantId }));
    await expect.poll(() => rows.pending.get('b')).toBe(0);
    await expect.poll(() => errors.length).toBe(1);
    expect(errors[0]!.tenantId).toBe('a');
    expect(String(errors[0]!.error)).toContain('connection lost while indexing a');
    await sleep(50);
    // Not retried in a loop: one call for the failed tenant until it is written to again.
    expect(rows.calls.filter((call) => call.tenantId === 'a')).toHaveLength(1);
    rows.failing.delete('a');
    drain.note('a');
    await expect.poll(() => rows.pending.get('a')).toBe(0);
  });

  // A row another transaction holds (a redaction, an exclusion) is skipped, and that transaction may commit it still
  // without a vector: its tenant must be tried again, by the timer and by drain(), until the row is indexed.
  it('should come back for rows another transaction held, by the timer and by drain()', async () => {
    const rows = pendingRows();
    const drain = createSearchDrain({ indexTenant: rows.indexTenant, onError: () => {}, idleMs: 5, batchSize: 10 });
    rows.write('a', 25);
    rows.held.set('a', 3);
    drain.note('a');
    await expect.poll(() => rows.pending.get('a')).toBe(3);
    const heldSince = rows.calls.length;
    await sleep(300);
    const callsWhileHeld = rows.calls.length;
    // Tried again after pauses that double (5, 10, 20 … ms), not every 5 ms: a lock held for long is no busy loop.
    expect(callsWhileHeld - heldSince).toBeGreaterThanOrEqual(1);
    expect(callsWhileHeld - heldSince).toBeLessThanOrEqual(9);
    rows.held.delete('a'); // the holder commits, without writing to the tenant's store
    await expect.poll(() => rows.pending.get('a')).toBe(0);
    expect(rows.calls.length).toBeGreaterThan(callsWhileHeld);

    rows.write('b', 4);
    rows.held.set('b', 4);
    drain.note('b');
    setTimeout(() => rows.held.delete('b'), 60);
    await drain.drain();
    expect(rows.pending.get('b')).toBe(0);
  });

  it('should go on to the other tenants when the failure reporter itself throws', async () => {
    const { rows, drain } = aFailingBesideB(() => {
      throw new Error('a reporter that throws');
    });
    // An unhandled rejection would fail this file; the other tenant is indexed all the same.
    await expect.poll(() => rows.pending.get('b')).toBe(0);
    rows.failing.delete('a');
    drain.note('a');
    await expect.poll(() => rows.pending.get('a')).toBe(0);
  });

  it('should index every noted tenant at drain(), reject with the first failure, and run the others', async () => {
    const rows = pendingRows();
    const drain = createSearchDrain({
      indexTenant: rows.indexTenant,
      onError: () => {
        throw new Error('the timer must not run while drain() has the tenants');
      },
      idleMs: 60_000,
      maxDelayMs: 60_000,
      batchSize: 2,
    });
    for (const tenant of ['a', 'b', 'c']) {
      rows.write(tenant, 5);
      drain.note(tenant);
    }
    rows.failing.add('b');
    await expect(drain.drain()).rejects.toThrow('connection lost while indexing b');
    expect([rows.pending.get('a'), rows.pending.get('b'), rows.pending.get('c')]).toEqual([0, 5, 0]);
    rows.failing.delete('b');
    // A drain() retries the tenants whose batch failed: it resolves only when none is left.
    await drain.drain();
    expect(rows.pending.get('b')).toBe(0);
  });

  it('should reject every drain() waiting on a run whose batch failed, while the failure lasts', async () => {
    const drain = createSearchDrain({
      indexTenant: async () => {
        await sleep(5);
        throw new Error('connection lost');
      },
      onError: () => {},
      idleMs: 600_000,
      maxDelayMs: 600_000,
    });
    drain.note('a');
    const outcomes = await Promise.all(
      [drain.drain(), drain.drain()].map(async (drained) =>
        drained.then(
          () => 'resolved',
          () => 'rejected',
        ),
      ),
    );
    expect(outcomes).toEqual(['rejected', 'rejected']);
  });

  // drain() waits for the timer's run; that run's end re-arms the timer (a note came during it); drain() must not
  // let the re-armed timer start a second run beside its own, nor resolve while one is still indexing.
  it("should never run the timer's drain beside drain(), nor resolve drain() with a batch in flight", async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const drain: ReturnType<typeof createSearchDrain> = createSearchDrain({
      indexTenant: async (tenantId) => {
        const call = ++calls;
        most = Math.max(most, ++inFlight);
        const batch = (async () => {
          await sleep(call === 1 ? 30 : 40);
          inFlight--;
          return { indexed: 0, remaining: false };
        })();
        // A write of the tenant resolves a few microtasks after the timer run's last batch.
        if (call === 1)
          void batch.then(async () => {
            for (let index = 0; index < 3; index++) await Promise.resolve();
            drain.note(tenantId);
          });
        // Another write lands while drain()'s run goes on.
        if (call === 2) queueMicrotask(() => drain.note(tenantId));
        return batch;
      },
      onError: () => {},
      idleMs: 0,
      maxDelayMs: 0,
    });
    drain.note('a');
    await sleep(10); // the timer's run is in flight
    await drain.drain();
    const inFlightWhenDrained = inFlight;
    await sleep(100);
    expect({ most, inFlightWhenDrained }).toEqual({ most: 1, inFlightWhenDrained: 0 });
  });

  it('should wait for a drain the timer started before draining again', async () => {
    const rows = pendingRows();
    let inFlight = 0;
    let most = 0;
    const drain = createSearchDrain({
      indexTenant: async (tenantId, limit) => {
        most = Math.max(most, ++inFlight);
        try {
          await sleep(20);
          return await rows.indexTenant(tenantId, limit);
        } finally {
          inFlight--;
        }
      },
      onError: () => {},
      idleMs: 1,
      batchSize: 1,
    });
    rows.write('a', 3);
    drain.note('a');
    await sleep(10);
    rows.write('a', 2);
    drain.note('a');
    await drain.drain();
    expect(rows.pending.get('a')).toBe(0);
    expect(most).toBe(1);
  });
});
