import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, type StoredMessage, type TenantHistory } from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

/** What a page within `maxBytes` holds: the newest row, then rows while the sum stays within it, at most `limit`. */
function expectedPage(newestFirst: StoredMessage[], limit: number, maxBytes: number) {
  const kept: StoredMessage[] = [];
  let bytes = 0;
  for (const row of newestFirst.slice(0, limit)) {
    bytes += row.byteSize;
    if (kept.length > 0 && bytes > maxBytes) break;
    kept.push(row);
  }
  return kept;
}

describe.each(BACKENDS)('listMessages within a byte budget on %s', (backend) => {
  const database = useTestDatabase(backend);

  async function seed(store: TenantHistory, sizes: number[]) {
    const thread = (await store.createThread()).id;
    for (const [index, size] of sizes.entries())
      await store.appendMessage(thread, {
        id: `m-${index}`,
        role: index % 2 === 0 ? 'user' : 'assistant',
        parts: [{ type: 'text', text: 'x'.repeat(size) }],
      });
    return thread;
  }

  /** The same reads through the one-statement function and through a transaction of the caller (the fallback). */
  async function bothPaths(tenantId: string, read: (store: TenantHistory) => Promise<unknown>) {
    const direct = await read(createAgentHistory({ db: database.db }).forTenant(tenantId));
    let inTransaction: unknown;
    await database.db.transaction(async (tx) => {
      inTransaction = await read(createAgentHistory({ db: tx as unknown as AgentHistoryDatabase }).forTenant(tenantId));
    });
    return { direct, inTransaction };
  }

  it('should end every page at the budget, keep the newest row, and page through every message once', async () => {
    const tenantId = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const sizes = [5, 400, 30, 2_000, 1, 90, 700, 60, 10, 3_000, 20, 250];
    const thread = await seed(store, sizes);
    const all = (await store.listMessages(thread, { limit: 500 })).messages;
    expect(all).toHaveLength(sizes.length);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 13 }),
        fc.integer({ min: 1, max: 6_000 }),
        fc.option(fc.integer({ min: 2, max: sizes.length + 1 }), { nil: undefined }),
        async (limit, maxBytes, before) => {
          const from = all.filter((row) => before === undefined || row.sequence < before);
          const expected = expectedPage(from, limit, maxBytes);
          const { direct, inTransaction } = await bothPaths(tenantId, (reader) =>
            reader.listMessages(thread, { limit, maxBytes, before }),
          );
          for (const page of [direct, inTransaction] as Array<Awaited<ReturnType<TenantHistory['listMessages']>>>) {
            expect(page.messages.map((row) => row.message.id)).toEqual(expected.map((row) => row.message.id));
            expect(page.nextCursor).toBe(expected.length < from.length ? expected.at(-1)!.sequence : null);
          }
        },
      ),
      { numRuns: 40 },
    );
    // Paging with a budget visits every message once, newest first.
    const seen: string[] = [];
    for (let before: number | undefined; ;) {
      const page = await store.listMessages(thread, { limit: 5, maxBytes: 500, before });
      seen.push(...page.messages.map((row) => row.message.id));
      if (page.nextCursor === null) break;
      before = page.nextCursor;
    }
    expect(seen).toEqual(all.map((row) => row.message.id));
  });

  it('should refuse a budget that is not a positive integer, naming it', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await seed(store, [3]);
    for (const maxBytes of [0, -1, 1.5, Number.NaN, '10' as unknown as number]) {
      const refused = store.listMessages(thread, { maxBytes });
      await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(refused).rejects.toThrow(/options\.maxBytes/);
    }
  });
});
