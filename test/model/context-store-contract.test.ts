import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import { createMemoryContextStore } from '../../src/testing/memory-context-store.js';
import { withTenant } from '../../src/tenant/with-tenant.js';
import { statementsThatDoNotRoute } from '../support/statement-routing.js';
import { CONTRACT_BACKENDS, itOffCitus, openTestDatabase, type TestDatabase } from '../support/test-database.js';
import { defineContextStoreContract, type StoredSnapshotRow, type StoredSummaryRow } from './context-store-contract.js';

defineContextStoreContract('createMemoryContextStore', async () => {
  const store = createMemoryContextStore();
  return {
    store,
    appendMessage: async (message, { pinned } = {}) => store.appendMessage({ message, pinned }).sequence,
    redactMessage: async (sequence) => store.redactMessage(sequence),
    updateMessage: async (sequence, { parts, contentVersion }) => {
      const { message } = store.messages[sequence - 1]!;
      store.updateMessage(sequence, {
        ...(parts === undefined ? { status: 'completed' } : { message: { ...message, parts } }),
        ...(contentVersion === undefined ? {} : { contentVersion }),
      });
    },
    storedSnapshots: async () =>
      store.snapshots.map(({ version, throughSequence, messagesHash }) => ({ version, throughSequence, messagesHash })),
    storedSummaries: async () =>
      store.summaries.map(({ fromSequence, throughSequence }) => ({ fromSequence, throughSequence })),
  };
});

describe.each(CONTRACT_BACKENDS)('on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(backend);
  });
  afterAll(() => database.close());

  defineContextStoreContract(`createAgentHistory(…).forTenant(…).contextStore(threadId) on ${backend}`, async () => {
    const tenant = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await tenant.createThread();
    const messageIds = new Map<number, string>();
    return {
      store: tenant.contextStore(thread.id),
      async appendMessage(message, { pinned } = {}) {
        const { stored } = await tenant.appendMessage(thread.id, message, { pinned });
        messageIds.set(stored.sequence, message.id);
        return stored.sequence;
      },
      async redactMessage(sequence) {
        await tenant.redactMessage(thread.id, messageIds.get(sequence)!, { actor: 'contract', reason: 'test' });
      },
      // A plain UPDATE as the app login, in the tenant's transaction (routed to its shard on Citus).
      async updateMessage(sequence, { parts, contentVersion }) {
        const set = [
          parts === undefined ? sql`updated_at = now()` : sql`parts = ${JSON.stringify(parts)}::json`,
          ...(contentVersion === undefined ? [] : [sql`content_version = ${contentVersion}`]),
        ];
        await withTenant(database.db, { tenantId: tenant.tenantId, role: 'agent_history_app' }, (tx) =>
          tx.execute(
            sql`update agent_message set ${sql.join(set, sql`, `)}
                where tenant_id = ${tenant.tenantId} and thread_id = ${thread.id} and sequence = ${sequence}`,
          ),
        );
      },
      // Read directly (as the superuser, so stale and policy-hidden rows are seen too).
      storedSnapshots: () =>
        database.admin.query<StoredSnapshotRow>(
          `select version, through_sequence::int as "throughSequence", messages_hash as "messagesHash"
           from agent_context_snapshot where thread_id = $1 order by version`,
          [thread.id],
        ),
      storedSummaries: () =>
        database.admin.query<StoredSummaryRow>(
          `select from_sequence::int as "fromSequence", through_sequence::int as "throughSequence"
           from agent_summary where thread_id = $1 order by created_at`,
          [thread.id],
        ),
    };
  });
  // The Citus section's claim, on every statement this block's tests made the store send.
  if (backend !== 'pglite') {
    itOffCitus('should have sent only statements that route to one tenant (pg_stat_statements)', async () => {
      const { checked, problems } = await statementsThatDoNotRoute(database);
      expect(checked).toBeGreaterThan(10);
      expect(problems).toEqual([]);
    });
  }
});
