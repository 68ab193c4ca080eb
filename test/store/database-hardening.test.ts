import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createAgentHistory } from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { rowsOf } from '../../src/tenant/database.js';
import { withTenant } from '../../src/tenant/with-tenant.js';
import { postgresErrorCode } from '../../src/store/store-context.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { range, userMessage } from '../support/fixtures.js';

const APPEND_ONE =
  'public.agent_history_append_message(uuid, text, uuid, text, text, public.agent_message_role, public.agent_message_status, json, jsonb, uuid, integer, integer, text, integer[], timestamptz, boolean, boolean, text)';

/**
 * Temporary tables shaped like the two the append functions write, on the connection that runs `execute`, open to
 * every role (the attacker owns them and grants them away): without a pinned search path they come first.
 */
const DECOYS = [
  `create temp table agent_thread (tenant_id uuid, id uuid, next_sequence bigint not null default 0,
     last_message_at timestamptz, updated_at timestamptz, deleted_at timestamptz)`,
  `create temp table agent_message (id uuid not null default gen_random_uuid(), tenant_id uuid, thread_id uuid,
     sequence bigint, message_id text, client_request_id text, run_id uuid, role public.agent_message_role,
     status public.agent_message_status, parts jsonb, metadata jsonb,
     context_state public.agent_message_context_state not null default 'eligible', pinned boolean,
     byte_size integer, token_count integer, token_counter_id text, content_version integer not null default 1,
     lease_expires_at timestamptz, created_at timestamptz not null default now(),
     updated_at timestamptz not null default now(), completed_at timestamptz)`,
  'grant all on agent_thread, agent_message to public',
];

describe.each(BACKENDS)('database defence in depth on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** One connection, as the app login on PostgreSQL 15 (PGlite has only one), with the decoy tables on it. */
  async function decoyedConnection(): Promise<{ db: AgentHistoryDatabase; close: () => Promise<void> }> {
    if (backend === 'pglite') {
      for (const statement of DECOYS) await database.admin.query(statement);
      return {
        db: database.db,
        close: async () => {
          await database.admin.query('drop table pg_temp.agent_thread, pg_temp.agent_message');
        },
      };
    }
    const client = postgres(database.appUrl!, { max: 1, onnotice: () => {} });
    for (const statement of DECOYS) await client.unsafe(statement);
    return { db: drizzlePostgres({ client }) as unknown as AgentHistoryDatabase, close: () => client.end() };
  }

  it.each([
    ['alone', false],
    ['batched', true],
  ] as const)(
    'should append %s to the real tables when the connection has temporary tables of the same names',
    async (_mode, batched) => {
      const tenantId = randomUUID();
      const thread = await createAgentHistory({ db: database.db }).forTenant(tenantId).createThread();
      const connection = await decoyedConnection();
      try {
        const store = createAgentHistory({
          db: connection.db,
          appendBatching: batched ? { maxInFlight: 1, stalledAfterMs: 600_000 } : false,
        }).forTenant(tenantId);
        await connection.db.execute(
          sql`insert into agent_thread (tenant_id, id) values (${tenantId}::uuid, ${thread.id}::uuid)`,
        );
        await Promise.all(range(0, 3).map((index) => store.appendMessage(thread.id, userMessage(`m-${index}`, 'hi'))));
        const stored = await database.admin.query<{ message_id: string }>(
          'select message_id from public.agent_message where thread_id = $1 order by sequence',
          [thread.id],
        );
        const captured = rowsOf(await connection.db.execute(sql`select message_id from pg_temp.agent_message`));
        expect([stored.map((row) => row.message_id), captured]).toEqual([['m-0', 'm-1', 'm-2', 'm-3'], []]);
      } finally {
        await connection.close();
      }
    },
  );

  // A login of its own: PGlite has one session user, which may switch to any role.
  (backend === 'postgres' ? it : () => undefined)(
    'should give a login outside the application role nothing through the append functions, though anyone may call them',
    async () => {
      const outsider = `outsider_${randomUUID().replaceAll('-', '')}`;
      await database.admin.query(`create role ${outsider} login`);
      const client = postgres(database.adminUrl!.replace('postgres://postgres@', `postgres://${outsider}@`), {
        max: 1,
        onnotice: () => {},
      });
      try {
        const tenantId = randomUUID();
        const thread = await createAgentHistory({ db: database.db }).forTenant(tenantId).createThread();
        const [{ may }] = await client.unsafe<Array<{ may: boolean }>>(
          `select has_function_privilege('${APPEND_ONE}', 'EXECUTE') as may`,
        );
        expect(may).toBe(true);
        // Switching to the application role is refused; as itself it may not write the table.
        const call = (role: string) =>
          client
            .unsafe(
              `select * from ${APPEND_ONE.replace(/\(.*/, '')}('${tenantId}', ${role}, '${thread.id}', 'm1', null, 'user', 'completed', '[]', '{}', null, 2, 0, null, null, null, false)`,
            )
            .then(
              () => 'stored',
              (error: unknown) => postgresErrorCode(error),
            );
        expect(await call(`'agent_history_app'`)).toBe('42501');
        expect(await call('null')).toBe('42501');
        const [{ count }] = await database.admin.query<{ count: number }>(
          'select count(*)::int as count from agent_message where thread_id = $1',
          [thread.id],
        );
        expect(count).toBe(0);
      } finally {
        await client.end();
        await database.admin.query(`drop role ${outsider}`);
      }
    },
  );

  it('should keep the audit log insert-only for the application role', async () => {
    const tenantId = randomUUID();
    const store = createAgentHistory({ db: database.db }).forTenant(tenantId);
    const thread = await store.createThread();
    await store.deleteThread(thread.id);
    const attempt = (statement: string) =>
      withTenant(database.db, { tenantId, role: 'agent_history_app' }, (tx) => tx.execute(sql.raw(statement))).then(
        () => 'done',
        (error: unknown) => postgresErrorCode(error),
      );
    expect([
      await attempt("update agent_audit_event set actor = 'someone else'"),
      await attempt('delete from agent_audit_event'),
      await attempt(
        "insert into agent_audit_event (tenant_id, action, actor) values (current_setting('app.tenant_id')::uuid, 'x', 'x')",
      ),
    ]).toEqual(['42501', '42501', 'done']);
    expect(
      await database.admin.query('select action from agent_audit_event where thread_id = $1', [thread.id]),
    ).toEqual([{ action: 'thread-deleted' }]);
  });
});
