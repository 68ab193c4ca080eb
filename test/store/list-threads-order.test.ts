import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, type StoredThread, type TenantHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';

// listThreads reads the thread indexes by the activity's minute (`last_activity_minute`, so that an
// append's thread-row update is HOT within a minute) and sorts each minute by (last_message_at, id). Its order
// must stay exactly "last_message_at desc, id desc" with no skip and no duplicate across pages: activity times are
// drawn around minute boundaries, equal to the microsecond, at the very boundary, a microsecond either side of it,
// with two users, soft-deleted threads and every page size; the oracle sorts them in JavaScript.
const MINUTE_US = 60_000_000;
const time = fc.oneof(
  fc.integer({ min: -3, max: 3 }).map((minute) => minute * MINUTE_US), // on a boundary
  fc.tuple(fc.integer({ min: -3, max: 3 }), fc.constantFrom(-1, 1)).map(([minute, by]) => minute * MINUTE_US + by),
  fc.integer({ min: -3 * MINUTE_US, max: 3 * MINUTE_US }),
  fc.constant(1_234_567), // a tie
);
const threadSpec = fc.record({ at: time, user: fc.constantFrom('u1', 'u2', null), deleted: fc.boolean() });

async function allPages(tenant: TenantHistory, options: { userId?: string; limit: number }) {
  const pages: StoredThread[][] = [];
  let cursor: string | undefined;
  do {
    const page = await tenant.listThreads({ ...options, cursor });
    pages.push(page.threads);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length < 50);
  return pages;
}

describe.each(BACKENDS)('listThreads order on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should page exactly by (last_message_at desc, id desc) whatever minutes the activity falls in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(threadSpec, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(undefined, 'u1'),
        async (specs, limit, userId) => {
          const tenant = createAgentHistory({ db: database.db }).forTenant(randomUUID());
          const threads: Array<{ id: string; at: number; user: string | null; deleted: boolean }> = [];
          for (const spec of specs) {
            const { id } = await tenant.createThread(spec.user === null ? {} : { userId: spec.user });
            threads.push({ id, ...spec });
            await database.admin.query(
              `update agent_thread set last_message_at = '2030-06-01 12:00:00+00'::timestamptz + $2 * interval '1 microsecond',
                 deleted_at = case when $3 then now() end where id = $1`,
              [id, spec.at, spec.deleted],
            );
          }
          const expected = threads
            .filter((thread) => !thread.deleted && (userId === undefined || thread.user === userId))
            .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
            .map((thread) => thread.id);
          const pages = await allPages(tenant, { limit, ...(userId === undefined ? {} : { userId }) });
          expect(pages.flat().map((thread) => thread.id)).toEqual(expected);
          for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('should move a thread to the top when a message is appended to it, within the same minute too', async () => {
    const tenant = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) ids.push((await tenant.createThread()).id);
    for (const id of [ids[2]!, ids[0]!, ids[4]!, ids[2]!]) {
      await tenant.appendMessage(id, userMessage(randomUUID(), 'hello'));
      const [first] = (await tenant.listThreads({ limit: 1 })).threads;
      expect(first?.id).toBe(id);
    }
  });
});
