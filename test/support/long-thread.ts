import { randomUUID } from 'node:crypto';
import { createAgentHistory, type TenantHistory } from '../../src/index.js';
import type { TestDatabase } from './test-database.js';

/**
 * A new tenant's thread of `count` short user messages (sequences 1…count), written as superuser in one statement
 * and analyzed: a thread that holds most of the table, for checking which plan a read of it takes.
 */
export async function longThread(
  database: TestDatabase,
  count = 5000,
): Promise<{ tenantId: string; thread: string; store: TenantHistory }> {
  const tenantId = randomUUID();
  const store = createAgentHistory({ db: database.db }).forTenant(tenantId);
  const thread = (await store.createThread()).id;
  await database.admin.query(
    `insert into agent_message (tenant_id, thread_id, sequence, message_id, role, status, parts, metadata, byte_size)
     select $1::uuid, $2::uuid, q, 'm-' || q, 'user', 'completed', '[{"type":"text","text":"hello"}]', '{}', 40
     from generate_series(1, $3::int) q`,
    [tenantId, thread, count],
  );
  await database.admin.query('update agent_thread set next_sequence = $2 where id = $1', [thread, count]);
  await database.admin.query('analyze agent_message');
  return { tenantId, thread, store };
}
