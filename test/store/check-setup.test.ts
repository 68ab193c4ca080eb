import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  checkSetup,
  createAgentHistory,
  DatabaseSetupError,
  RowLevelSecurityBypassError,
  type SetupReport,
} from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { TEMPLATE_DATABASE } from '../support/global-setup.js';

/** A database of its own on the suite's server (migrated from the template, or empty) and logins made for it. */
describe('checkSetup on PostgreSQL 15', () => {
  const server = inject('postgresServerUrl');
  const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
  const migrated = `setup_migrated_${suffix}`;
  const empty = `setup_empty_${suffix}`;
  const login = `setup_login_${suffix}`;
  const clients: Array<ReturnType<typeof postgres>> = [];
  const admin = (database: string) => {
    const client = postgres(`${server}/${database}`, { max: 1, onnotice: () => {} });
    clients.push(client);
    return client;
  };
  const asLogin = (database: string): AgentHistoryDatabase => {
    const client = postgres(`${server.replace('postgres://postgres@', `postgres://${login}@`)}/${database}`, {
      max: 2,
      onnotice: () => {},
    });
    clients.push(client);
    return drizzle({ client }) as unknown as AgentHistoryDatabase;
  };
  /** Runs each problem's fix as the administrator, as the report tells an operator to. */
  const applyFixes = async (database: string, report: SetupReport) => {
    for (const problem of report.problems) await admin(database).unsafe(problem.fix);
  };

  beforeAll(async () => {
    const maintenance = admin('postgres');
    await maintenance.unsafe(`create database ${migrated} template ${TEMPLATE_DATABASE}`);
    await maintenance.unsafe(`create database ${empty}`);
    await maintenance.unsafe(`create role ${login} login noinherit`);
  });
  afterAll(async () => {
    await Promise.all(clients.splice(1).map((client) => client.end()));
    const maintenance = clients[0]!;
    for (const database of [migrated, empty])
      await maintenance.unsafe(`drop database if exists ${database} with (force)`);
    await maintenance.unsafe(`drop role if exists ${login}`);
    await maintenance.end();
  });

  it('should report a database that was never migrated as such, and the store should throw DatabaseSetupError at its first call', async () => {
    await admin(empty).unsafe(`grant agent_history_app to ${login}`);
    const db = asLogin(empty);
    const report = await checkSetup(db);
    expect(report.ok).toBe(false);
    expect(report.problems.map((problem) => problem.code)).toEqual(['migrations-missing']);
    expect(report.problems[0]!.message).toContain('table "public"."agent_thread"');
    expect(report.problems[0]!.message).toContain('function "public".agent_history_append_message');
    const history = createAgentHistory({ db });
    const error = await history.ready().catch((thrown: unknown) => thrown);
    // Not RowLevelSecurityBypassError: nothing here is about the login bypassing row-level security.
    expect(error).toBeInstanceOf(DatabaseSetupError);
    expect((error as DatabaseSetupError).message).toMatch(
      /run migrate\(db\) \(or drizzle-kit migrate\) as the database owner/,
    );
    await expect(history.forTenant(randomUUID()).listThreads()).rejects.toBeInstanceOf(DatabaseSetupError);
  });

  it('should name the grant a login lacks, and pass once the administrator runs it', async () => {
    await admin(migrated).unsafe(`revoke agent_history_app from ${login}`);
    const db = asLogin(migrated);
    const report = await checkSetup(db);
    expect(report).toEqual({
      ok: false,
      login,
      role: 'agent_history_app',
      problems: [
        {
          code: 'app-role-not-granted',
          message: `The login "${login}" may not switch to the application role "agent_history_app".`,
          fix: `GRANT "agent_history_app" TO "${login}";`,
        },
      ],
    });
    // At start-up, not at the first append.
    const history = createAgentHistory({ db });
    await expect(history.ready()).rejects.toBeInstanceOf(DatabaseSetupError);
    await applyFixes(migrated, report);
    expect(await checkSetup(db)).toMatchObject({ ok: true, problems: [] });
    const store = createAgentHistory({ db }).forTenant(randomUUID());
    const thread = await store.createThread();
    expect(
      (await store.appendMessage(thread.id, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] })).created,
    ).toBe(true);
  });

  it('should name a function the login may not call and the schema it may not use, each with the SQL that fixes it', async () => {
    await admin(migrated).unsafe(`grant agent_history_app to ${login}`);
    await admin(migrated).unsafe('revoke execute on function agent_history_append_messages from public');
    await admin(migrated).unsafe('revoke usage on schema public from public');
    try {
      const db = asLogin(migrated);
      const report = await checkSetup(db);
      expect(report.problems.map((problem) => [problem.code, problem.fix])).toEqual([
        ['schema-not-usable', `GRANT USAGE ON SCHEMA "public" TO "${login}";`],
        ['function-not-executable', `GRANT EXECUTE ON FUNCTION "public".agent_history_append_messages TO "${login}";`],
      ]);
      await applyFixes(migrated, report);
      expect((await checkSetup(db)).ok).toBe(true);
    } finally {
      await admin(migrated).unsafe('grant usage on schema public to public');
      await admin(migrated).unsafe('grant execute on function agent_history_append_messages to public');
    }
  });

  it('should report an application role that does not exist, with the statement that creates it', async () => {
    const report = await checkSetup(asLogin(migrated), { appRole: `missing_${suffix}` });
    expect(report.problems).toEqual([
      {
        code: 'app-role-missing',
        message: `The application role "missing_${suffix}" does not exist.`,
        fix: `CREATE ROLE "missing_${suffix}" NOLOGIN; (as a role with CREATEROLE), then run the migrations.`,
      },
    ]);
  });

  it('should report a superuser as bypassing row-level security, and the store should refuse it', async () => {
    const db = drizzle({ client: admin(migrated) }) as unknown as AgentHistoryDatabase;
    const report = await checkSetup(db, { appRole: null });
    expect(report.problems.map((problem) => problem.code)).toEqual(['row-level-security-bypassed']);
    expect(report.problems[0]!.message).toContain('it is a superuser');
    await expect(createAgentHistory({ db, appRole: null }).ready()).rejects.toBeInstanceOf(RowLevelSecurityBypassError);
  });
});
