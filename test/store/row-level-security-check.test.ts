import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createAgentHistory, RowLevelSecurityBypassError } from '../../src/index.js';
import { rowsOf, type AgentHistoryDatabase } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

describe.each(BACKENDS)('the row-level security check on %s', (backend) => {
  const database = useTestDatabase(backend);
  const clients: Array<ReturnType<typeof postgres>> = [];
  afterAll(() => Promise.all(clients.map((client) => client.end())));

  /** Creates a role once per cluster (roles are cluster-wide, and every PostgreSQL test database shares them). */
  const createRole = (name: string, attributes = '') =>
    `do $$ begin create role ${name} nologin ${attributes}; exception when duplicate_object then null; end $$`;

  /** A connection as a superuser: PGlite's only user, or PostgreSQL's admin login. */
  const superuserDb = (): AgentHistoryDatabase => {
    if (backend === 'pglite') return database.db;
    const client = postgres(database.adminUrl!, { max: 2, onnotice: () => {} });
    clients.push(client);
    return drizzle({ client }) as unknown as AgentHistoryDatabase;
  };

  const refusal = async (history: ReturnType<typeof createAgentHistory>) => {
    const store = history.forTenant(randomUUID());
    const error = await store.createThread({}).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RowLevelSecurityBypassError);
    // Every later call is refused too, appends included (they do not run in a store transaction).
    await expect(store.listThreads()).rejects.toBeInstanceOf(RowLevelSecurityBypassError);
    await expect(
      store.appendMessage(randomUUID(), { id: 'm', role: 'user', parts: [{ type: 'text', text: 'x' }] }),
    ).rejects.toBeInstanceOf(RowLevelSecurityBypassError);
    return error as RowLevelSecurityBypassError;
  };

  it('should refuse a superuser login with appRole null, naming the role and why, and write nothing', async () => {
    const before = await database.admin.query<{ n: number }>('select count(*)::int as n from agent_thread');
    const error = await refusal(createAgentHistory({ db: superuserDb(), appRole: null }));
    expect(error.reasons).toContain('it is a superuser');
    expect(error.message).toMatch(/^Row-level security does not hold for the role "\w+": it is a superuser/);
    expect(await database.admin.query('select count(*)::int as n from agent_thread')).toEqual(before);
  });

  it('should refuse an appRole that is a superuser or has BYPASSRLS', async () => {
    await database.admin.query(createRole('rls_bypasser', 'bypassrls'));
    await database.admin.query('grant agent_history_app to rls_bypasser');
    const bypass = await refusal(createAgentHistory({ db: superuserDb(), appRole: 'rls_bypasser' }));
    expect([bypass.role, bypass.reasons]).toEqual(['rls_bypasser', ['it has BYPASSRLS']]);
    const superuser = await refusal(createAgentHistory({ db: superuserDb(), appRole: 'postgres' }));
    expect(superuser.reasons).toContain('it is a superuser');
  });

  it('should refuse the owner of a table whose row-level security is not forced, and accept it once forced', async () => {
    await database.admin.query(createRole('audit_owner'));
    await database.admin.query('grant agent_history_app to audit_owner');
    await database.admin.query('alter table agent_audit_event owner to audit_owner');
    await database.admin.query('alter table agent_audit_event no force row level security');
    try {
      const error = await refusal(createAgentHistory({ db: superuserDb(), appRole: 'audit_owner' }));
      expect(error.reasons).toEqual(['it owns "public"."agent_audit_event", whose row-level security is not forced']);
      await database.admin.query('alter table agent_audit_event force row level security');
      const store = createAgentHistory({ db: superuserDb(), appRole: 'audit_owner' }).forTenant(randomUUID());
      await expect(store.createThread({})).resolves.toMatchObject({ title: null });
    } finally {
      await database.admin.query('alter table agent_audit_event force row level security');
      await database.admin.query('alter table agent_audit_event owner to postgres');
    }
  });

  it("should only warn, once, with rowLevelSecurityCheck: 'warn'", async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const history = createAgentHistory({ db: superuserDb(), appRole: null, rowLevelSecurityCheck: 'warn' });
      const store = history.forTenant(randomUUID());
      const thread = await store.createThread({});
      await store.appendMessage(thread.id, { id: 'm', role: 'user', parts: [{ type: 'text', text: 'x' }] });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toContain('it is a superuser');
    } finally {
      warn.mockRestore();
    }
  });

  it('should accept the application role, as every other test of the store does', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    await expect(store.createThread({})).resolves.toMatchObject({ title: null });
  });
});

describe.each(BACKENDS)("a store on the caller's transaction on %s", (backend) => {
  const database = useTestDatabase(backend);

  it("should put the caller's tenant setting and role back after each call, appends included", async () => {
    const settings = async (tx: AgentHistoryDatabase) =>
      rowsOf<{ tenant: string | null; role: string; user: string }>(
        await tx.execute(
          sql`select current_setting('app.tenant_id', true) as tenant, current_setting('role') as role, current_user::text as user`,
        ),
      )[0]!;
    const callerTenant = randomUUID();
    await database.db.transaction(async (tx) => {
      const db = tx as unknown as AgentHistoryDatabase;
      await db.execute(sql`select set_config('app.tenant_id', ${callerTenant}, true)`);
      const before = await settings(db);
      const store = createAgentHistory({ db }).forTenant(randomUUID());
      const thread = await store.createThread({});
      expect(await settings(db)).toEqual(before);
      await store.appendMessage(thread.id, { id: 'm-1', role: 'user', parts: [{ type: 'text', text: 'hi' }] });
      expect(await settings(db)).toEqual(before);
      expect((await store.listMessages(thread.id)).messages).toHaveLength(1);
      expect(await settings(db)).toEqual({ tenant: callerTenant, role: 'none', user: before.user });
    });
  });
});
