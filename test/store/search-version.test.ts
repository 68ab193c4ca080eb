import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, type RebuildProgress, type TenantHistory } from '../../src/index.js';
import { BACKENDS, describeOffCitus, useTestDatabase, type TestDatabase } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';

interface VersionRow {
  message_id: string;
  search_version: number | null;
  has_vector: boolean;
  /** The stored vector is the one the current extraction makes of the current parts. */
  current: boolean | null;
}

/** Each message of `tenantId`: its version, and whether its vector is the one the trigger would make now. */
async function versionsOf(database: TestDatabase, tenantId: string): Promise<VersionRow[]> {
  return database.admin.query<VersionRow>(
    `select m.message_id, m.search_version, m.search_vector is not null as has_vector,
       m.search_vector = to_tsvector('simple'::regconfig,
         jsonb_path_query_array(m.parts::jsonb, 'strict $[*] ? (@.type == "text").text')) as current
     from agent_message m where m.tenant_id = $1 order by m.message_id`,
    [tenantId],
  );
}

async function seed(store: TenantHistory, messages: number): Promise<string> {
  const thread = await store.createThread();
  for (let i = 0; i < messages; i++)
    await store.appendMessage(thread.id, userMessage(`m-${String(i).padStart(3, '0')}`, `apple number ${i} bread`));
  return thread.id;
}

describe.each(BACKENDS)('the search vector version on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should stamp every vector with the current version, and no version on a row without one', async () => {
    const tenantId = randomUUID();
    const inline = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const deferred = createAgentHistory({ db: database.db, search: 'deferred' }).forTenant(tenantId);
    const thread = await seed(inline, 2);
    await deferred.appendMessage(thread, userMessage('m-pending', 'cider pending'));
    expect(await versionsOf(database, tenantId)).toEqual([
      { message_id: 'm-000', search_version: 1, has_vector: true, current: true },
      { message_id: 'm-001', search_version: 1, has_vector: true, current: true },
      { message_id: 'm-pending', search_version: null, has_vector: false, current: null },
    ]);
    expect(await deferred.indexPendingMessages()).toEqual({ indexed: 1, remaining: false });
    expect((await versionsOf(database, tenantId)).at(-1)).toMatchObject({ search_version: 1, current: true });
  });

  it('should not let a writer forge a version or keep a vector of older text', async () => {
    const tenantId = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId);
    await seed(store, 2);
    // A writer that stamps a version, or a vector with a version, gets the trigger's own.
    await database.admin.query(`update agent_message set search_version = 9 where tenant_id = $1`, [tenantId]);
    await database.admin.query(
      `update agent_message set search_vector = to_tsvector('simple', 'forged'), search_version = 1
       where tenant_id = $1 and message_id = 'm-000'`,
      [tenantId],
    );
    for (const row of await versionsOf(database, tenantId))
      expect(row, row.message_id).toMatchObject({ search_version: 1, current: true });
    // Clearing the vector (a rebuild's first step), or -1 (a deferring store's "store no vector"), leaves a row to
    // index, with no version; a search still finds it.
    await database.admin.query(
      `update agent_message set search_vector = null where tenant_id = $1 and message_id = 'm-000'`,
      [tenantId],
    );
    await database.admin.query(
      `update agent_message set search_version = -1 where tenant_id = $1 and message_id = 'm-001'`,
      [tenantId],
    );
    for (const row of await versionsOf(database, tenantId))
      expect(row, row.message_id).toMatchObject({ search_version: null, has_vector: false });
    expect((await store.searchMessages('apple')).map((hit) => hit.messageId).sort()).toEqual(['m-000', 'm-001']);
  });
});

// Off Citus: the older vectors are written with the trigger disabled, a table-wide change the Citus suite does not make.
describeOffCitus.each(BACKENDS)('rebuildDerivedData after a change of text extraction on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** Vectors written by an "older extraction": other text, and version 0, with the trigger off. */
  async function ageVectors(tenantId: string) {
    await database.admin.query('alter table agent_message disable trigger agent_message_search_vector');
    await database.admin.query(
      `update agent_message set search_vector = to_tsvector('simple', 'older extraction'), search_version = 0
       where tenant_id = $1 and search_vector is not null`,
      [tenantId],
    );
    await database.admin.query('alter table agent_message enable trigger agent_message_search_vector');
  }

  it('should recompute every older vector, resumably, beside a writer, and no other tenant', async () => {
    const tenantId = randomUUID();
    const other = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const deferred = createAgentHistory({ db: database.db, search: 'deferred' }).forTenant(tenantId);
    const thread = await seed(store, 11);
    await deferred.appendMessage(thread, userMessage('m-pending', 'cider pending'));
    await seed(createAgentHistory({ db: database.db }).forTenant(other), 3);
    await ageVectors(tenantId);
    await ageVectors(other);
    const beforeSearch = await store.searchMessages('apple');
    expect(beforeSearch).toEqual([]); // the older vectors do not hold the words

    // The first call stops after its first batch; a writer appends and redacts meanwhile.
    const stop = new Error('stop');
    await expect(
      store.rebuildDerivedData({
        tokenCounts: false,
        batchSize: 4,
        onProgress: () => {
          throw stop;
        },
      }),
    ).rejects.toBe(stop);
    expect((await versionsOf(database, tenantId)).filter((row) => row.search_version === 1)).toHaveLength(4);
    const writer = (async () => {
      for (let i = 0; i < 5; i++) await store.appendMessage(thread, userMessage(`late-${i}`, `late apple ${i}`));
      await store.redactMessage(thread, 'm-005', { actor: 'test', reason: 'test' });
    })();
    const progress: RebuildProgress[] = [];
    const rest = await store.rebuildDerivedData({
      tokenCounts: false,
      batchSize: 4,
      onProgress: (step) => void progress.push(step),
    });
    await writer;
    const afterWriter = await store.rebuildDerivedData({ tokenCounts: false });
    // 7 left; the redaction may have recomputed one itself first.
    expect(rest.searchVectors + afterWriter.searchVectors).toBeGreaterThanOrEqual(6);
    expect(rest.searchVectors + afterWriter.searchVectors).toBeLessThanOrEqual(7);
    expect(progress.every((step) => step.kind === 'search-vectors' && step.tenantId === tenantId)).toBe(true);
    expect(await store.rebuildDerivedData({ tokenCounts: false })).toEqual({
      tokenCounts: 0,
      summaries: 0,
      searchVectors: 0,
    });

    for (const row of await versionsOf(database, tenantId)) {
      if (row.message_id === 'm-pending') expect(row).toMatchObject({ search_version: null, has_vector: false });
      else expect(row, row.message_id).toMatchObject({ search_version: 1, current: true });
    }
    // Another tenant's rows are not this store's to rebuild.
    for (const row of await versionsOf(database, other))
      expect(row, row.message_id).toMatchObject({ search_version: 0, current: false });
    const hits = await store.searchMessages('apple', { limit: 100 });
    expect(hits.map((hit) => hit.messageId).sort()).toEqual(
      [
        ...Array.from({ length: 11 }, (_, i) => `m-${String(i).padStart(3, '0')}`),
        ...[0, 1, 2, 3, 4].map((i) => `late-${i}`),
      ]
        .filter((id) => id !== 'm-005')
        .sort(),
    );
  });
});
