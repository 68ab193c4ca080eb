import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { pgSchema } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';
import {
  createAgentHistory,
  customMigrationSql,
  InvalidArgumentError,
  NotFoundError,
  type AppendBatchingOptions,
} from '../../src/index.js';
import { defineAgentTables } from '../../src/schema/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { APP_LOGIN } from '../support/global-setup.js';
import { BACKENDS, type Backend } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';

const SCHEMA = 'agent_chat';
const APP_ROLE = 'agent_chat_app';

/**
 * A fresh database whose only agent-history objects are in SCHEMA, for APP_ROLE, set up the way a drizzle-kit
 * project does it: customMigrationSql's first part, the statements drizzle-kit generates from
 * `defineAgentTables({ schema, appRole })`, then its second part. Nothing is in `public`, so a name the package
 * failed to qualify fails.
 */
async function customSchemaDatabase(
  backend: Backend,
): Promise<{ db: AgentHistoryDatabase; query: (text: string) => Promise<unknown[]>; close: () => Promise<void> }> {
  const schema = pgSchema(SCHEMA);
  const tables = defineAgentTables({ schema, appRole: APP_ROLE });
  const generated = await generateMigration(generateDrizzleJson({}), generateDrizzleJson({ schema, ...tables }));
  const { beforeTables, afterTables } = customMigrationSql({ schema: SCHEMA, appRole: APP_ROLE });
  const statements = [
    ...beforeTables.split('--> statement-breakpoint'),
    ...generated,
    ...afterTables.split('--> statement-breakpoint'),
  ];

  if (backend === 'pglite') {
    const client = await PGlite.create();
    for (const statement of statements) await client.exec(statement);
    return {
      db: drizzlePglite({ client }) as unknown as AgentHistoryDatabase,
      query: async (text) => (await client.query(text)).rows,
      close: () => client.close(),
    };
  }
  const server = inject('postgresServerUrl');
  const name = `c_${randomUUID().replaceAll('-', '')}`;
  const maintenance = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
  await maintenance.unsafe(`create database ${name}`);
  const admin = postgres(`${server}/${name}`, { max: 1, onnotice: () => {} });
  const afterStatements = afterTables.split('--> statement-breakpoint');
  for (const statement of statements.slice(0, -afterStatements.length)) await admin.unsafe(statement);
  // The pool's login (not superuser, not owner, no BYPASSRLS, NOINHERIT) becomes a member of the renamed role, and
  // may look up the schema's functions: it calls them before they switch to the role.
  await admin.unsafe(`grant ${APP_ROLE} to ${APP_LOGIN}`);
  await admin.unsafe(`grant usage on schema ${SCHEMA} to ${APP_LOGIN}`);
  for (const statement of afterStatements) await admin.unsafe(statement);
  const app = postgres(`${server}/${name}`.replace('postgres://postgres@', `postgres://${APP_LOGIN}@`), {
    max: 4,
    onnotice: () => {},
  });
  return {
    db: drizzlePostgres({ client: app }) as unknown as AgentHistoryDatabase,
    query: async (text) => [...(await admin.unsafe(text))],
    close: async () => {
      await app.end();
      await admin.end();
      await maintenance.unsafe(`drop database if exists ${name} with (force)`);
      await maintenance.end();
    },
  };
}

describe.each(BACKENDS)('tables in another schema, with another application role, on %s', (backend) => {
  it('should append alone and in batches, read, search and isolate tenants with everything in that schema', async () => {
    const database = await customSchemaDatabase(backend);
    try {
      // Nothing of the package landed in public.
      expect(
        await database.query(
          `select to_regclass('public.agent_message') as t, to_regproc('public.agent_history_append_message') as f, to_regproc('public.agent_history_append_messages') as b`,
        ),
      ).toEqual([{ t: null, f: null, b: null }]);
      const tables = defineAgentTables({ schema: pgSchema(SCHEMA), appRole: APP_ROLE });
      const history = (appendBatching: AppendBatchingOptions | false) =>
        createAgentHistory({ db: database.db, tables, appRole: APP_ROLE, appendBatching });
      for (const appendBatching of [false, { maxInFlight: 1, stalledAfterMs: 600_000 }] as const) {
        const tenantId = randomUUID();
        const store = history(appendBatching).forTenant(tenantId);
        const thread = await store.createThread({ title: 'in another schema' });
        const append = (id: string) => store.appendMessage(thread.id, userMessage(id, `bread ${id}`));
        // With batching: one alone (the single-append function), then the rest made in one turn and sent as one
        // statement (the batch function), in call order. Without: one after the other.
        const results =
          appendBatching === false
            ? [await append('m1'), await append('m2'), await append('m3'), await append('m4')]
            : [await append('m1'), ...(await Promise.all(['m2', 'm3', 'm4'].map(append)))];
        expect(results.map((result) => [result.stored.message.id, result.stored.sequence, result.created])).toEqual([
          ['m1', 1, true],
          ['m2', 2, true],
          ['m3', 3, true],
          ['m4', 4, true],
        ]);
        expect((await store.appendMessage(thread.id, userMessage('m2', 'bread m2'))).created).toBe(false);
        const transactions = (await database.query(
          `select count(distinct xmin::text) as n from ${SCHEMA}.agent_message where thread_id = '${thread.id}'`,
        )) as Array<{ n: string | number }>;
        expect(Number(transactions[0]!.n)).toBe(appendBatching === false ? 4 : 2);
        expect((await store.listMessages(thread.id)).messages.map((stored) => stored.message.id)).toEqual([
          'm4',
          'm3',
          'm2',
          'm1',
        ]);
        expect((await store.listChatMessages(thread.id)).messages.map((entry) => entry.message.id)).toEqual([
          'm1',
          'm2',
          'm3',
          'm4',
        ]);
        expect(await store.searchMessages('bread')).toHaveLength(4);
        // Memory in that schema, through the renamed role's grants.
        const memory = await store.updateWorkingMemory({ threadId: thread.id, content: 'bread', expectedVersion: 0 });
        expect(memory).toMatchObject({ scope: 'thread', version: 1 });
        expect(await store.recallMessages({ query: 'bread', threadId: thread.id })).toEqual([]);
        // The content version trigger, in that schema: a change of parts raises content_version, whoever writes.
        const raised = (await database.query(
          `update ${SCHEMA}.agent_message set parts = '[]' where thread_id = '${thread.id}' and message_id = 'm1'
           returning content_version`,
        )) as Array<{ content_version: number }>;
        expect(raised).toEqual([{ content_version: 2 }]);
        // Row-level security holds for the renamed role: another tenant sees nothing and cannot append.
        const other = history(appendBatching).forTenant(randomUUID());
        await expect(other.getThread(thread.id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(other.listChatMessages(thread.id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(other.appendMessage(thread.id, userMessage('intruder'))).rejects.toBeInstanceOf(NotFoundError);
        expect(await other.searchMessages('bread')).toEqual([]);
      }
    } finally {
      await database.close();
    }
  }, 120_000);
});

describe('customMigrationSql', () => {
  it('should qualify every table, type and function and rename the role, leaving column references alone', () => {
    const { beforeTables, afterTables } = customMigrationSql({ schema: 'agent', appRole: 'chat_app' });
    expect(beforeTables).toContain(`CREATE ROLE "chat_app" NOLOGIN`);
    expect(afterTables).toContain('ALTER TABLE "agent"."agent_message" FORCE ROW LEVEL SECURITY');
    expect(afterTables).toContain('CREATE FUNCTION "agent"."agent_history_append_messages"(');
    expect(afterTables).toContain('FROM "agent"."agent_history_append_message"(');
    expect(afterTables).toContain('GRANT USAGE ON SCHEMA "agent" TO "chat_app"');
    // Every function with a pinned search path (the five one-statement writes too); the four reads also with the
    // planner setting (the two stored-message page reads twice: created, then re-created with a fix).
    expect(afterTables.match(/SET search_path = pg_catalog, pg_temp AS/g)).toHaveLength(10);
    for (const name of ['get_thread', 'start_run', 'finish_run', 'write_answer', 'write_snapshot'])
      expect(afterTables).toContain(`CREATE FUNCTION "agent"."agent_history_${name}"(`);
    expect(afterTables).toContain('RETURNS SETOF "agent"."agent_run"');
    expect(afterTables).toContain('p_status::"agent"."agent_run_status"');
    expect(afterTables.match(/SET search_path = pg_catalog, pg_temp SET enable_sort = off AS/g)).toHaveLength(6);
    expect(afterTables).toContain('CREATE FUNCTION "agent"."agent_history_list_chat_messages"(');
    expect(afterTables).toContain('FROM "agent"."agent_thread" t');
    expect(afterTables).toContain('ALTER TABLE "agent"."agent_message" ALTER COLUMN "parts" SET COMPRESSION lz4;');
    expect(afterTables).toContain(
      'ALTER TABLE "agent"."agent_tool_payload" ALTER COLUMN "content" SET COMPRESSION lz4;',
    );
    expect(afterTables).not.toContain('"public"');
    expect(afterTables).toContain('CREATE FUNCTION "agent"."agent_history_load_context_json"(');
    expect(afterTables).toContain('NEW.search_version := "agent"."agent_history_search_version"();');
    expect(afterTables).toContain('CREATE FUNCTION "agent"."agent_history_list_messages_json"(');
    expect(afterTables).toContain('CREATE FUNCTION "agent"."agent_history_list_messages"(');
    expect(afterTables).toContain(
      'ON "agent"."agent_message"\nFOR EACH ROW EXECUTE FUNCTION "agent"."agent_history_message_search_vector"()',
    );
    expect(afterTables).toContain(
      'CREATE TRIGGER agent_message_content_version BEFORE UPDATE OF parts, content_version ON "agent"."agent_message"\nFOR EACH ROW EXECUTE FUNCTION "agent"."agent_history_message_content_version"()',
    );
    expect(afterTables).toContain('FROM "agent"."agent_message" m');
    expect(afterTables).toContain('GRANT SELECT, INSERT ON "agent"."agent_audit_event" TO "chat_app"');
    expect(afterTables).toContain('ALTER TABLE "agent"."agent_memory" FORCE ROW LEVEL SECURITY');
    expect(afterTables).toContain('GRANT SELECT, INSERT, UPDATE, DELETE ON "agent"."agent_memory" TO "chat_app"');
    expect(afterTables).not.toContain('"public"');
    // Every mention of a package object is qualified, and the default role is gone.
    // Names inside string literals (an error's text) are text, left as written.
    const unqualified = afterTables
      .replace(/--[^\n]*/g, '')
      .replace(/'[^'\n]*'/g, '')
      .replace(/"agent"\."agent_\w+"/g, '')
      .replace(/"agent_message"\."pinned"/g, '');
    expect(
      unqualified.match(
        /agent_(thread|run|message|summary|context_snapshot|audit_event|memory|history_append_messages?|history_list_messages|history_load_context_json|history_get_thread|history_start_run|history_finish_run|history_write_answer|history_write_snapshot|tool_payload|run_status|message_role|message_status|message_context_state)\b/g,
      ),
    ).toBeNull();
    expect(`${beforeTables}${afterTables}`).not.toMatch(/agent_history_app\b/);
  });

  it('should refuse a schema or role that is not a plain identifier, naming it', () => {
    for (const [options, named] of [
      [{ schema: 'a"; drop table x; --' }, 'schema'],
      [{ appRole: '' }, 'appRole'],
      [{ schema: 'x'.repeat(64) }, 'schema'],
      // `$` is legal in Postgres names, but the rewrite's replacement strings would turn `$$` into `$`.
      [{ schema: 'agent$$x' }, 'schema'],
      [{ appRole: 'app$1' }, 'appRole'],
    ] as const) {
      let thrown: unknown;
      try {
        customMigrationSql(options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as Error).message).toContain(`Invalid ${named}`);
    }
  });
});
