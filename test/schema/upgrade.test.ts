import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Logger } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { checkSetup, createAgentHistory, migrate, MIGRATIONS_FOLDER } from '../../src/index.js';
import { migratorFor } from '../../src/store/migrate.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { APP_LOGIN } from '../support/global-setup.js';
import { BACKENDS } from '../support/test-database.js';

/** The migrations of release 1.0, the first: every later release upgrades a database that ran these. */
const RELEASE_1_0 = ['0000_roles', '0001_tables', '0002_rls_grants_functions'];

/** A copy of the shipped migrations folder cut back to release 1.0. */
function release10Folder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'agent-history-1.0-'));
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8'));
  expect(journal.entries.slice(0, 3).map((entry: { tag: string }) => entry.tag)).toEqual(RELEASE_1_0);
  journal.entries = journal.entries.slice(0, 3);
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal, null, 2));
  return folder;
}

/** A store's database whose statements (as Drizzle sends them) are recorded. */
interface Recorded {
  db: AgentHistoryDatabase;
  sent: string[];
}

describe.each(BACKENDS)('an upgrade from release 1.0 on %s', (backend) => {
  let owner: AgentHistoryDatabase;
  let app: Recorded;
  const closers: Array<() => Promise<unknown>> = [];
  const folder = release10Folder();

  beforeAll(async () => {
    const sent: string[] = [];
    const logger: Logger = { logQuery: (query) => void sent.push(query) };
    if (backend === 'pglite') {
      const client = await PGlite.create();
      closers.push(() => client.close());
      owner = drizzlePglite({ client }) as unknown as AgentHistoryDatabase;
      app = { db: drizzlePglite({ client, logger }) as unknown as AgentHistoryDatabase, sent };
    } else {
      // A new, empty database on the suite's server: its owner migrates; the app login (NOINHERIT, granted the
      // application role) writes.
      const server = inject('postgresServerUrl');
      const name = `u_${randomUUID().replaceAll('-', '')}`;
      const maintenance = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
      await maintenance.unsafe(`create database ${name}`);
      const ownerClient = postgres(`${server}/${name}`, { max: 1, onnotice: () => {} });
      const appClient = postgres(`${server}/${name}`.replace('postgres://postgres@', `postgres://${APP_LOGIN}@`), {
        max: 4,
        onnotice: () => {},
      });
      closers.push(async () => {
        await appClient.end();
        await ownerClient.end();
        await maintenance.unsafe(`drop database if exists ${name} with (force)`);
        await maintenance.end();
      });
      owner = drizzlePostgres({ client: ownerClient }) as unknown as AgentHistoryDatabase;
      app = { db: drizzlePostgres({ client: appClient, logger }) as unknown as AgentHistoryDatabase, sent };
    }
    await (
      await migratorFor(owner)
    ).migrate(owner as never, {
      migrationsFolder: folder,
      migrationsTable: '__agent_history_migrations',
      migrationsSchema: 'agent_history',
    });
  }, 120_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('should run the store on a 1.0 database, then upgrade it with migrate(), keeping every row and writing in one statement', async () => {
    const tenantId = randomUUID();
    const store = () => createAgentHistory({ db: app.db, appendBatching: false }).forTenant(tenantId, { userId: 'u' });
    // Before the upgrade: checkSetup names what is missing, and the store writes the way 1.0 did.
    const before = await checkSetup(app.db);
    expect(before.ok).toBe(false);
    expect(JSON.stringify(before.problems)).toContain('agent_history_write_answer');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const old = store();
    const thread = await old.createThread();
    await old.appendMessage(thread.id, { id: 'q1', role: 'user', parts: [{ type: 'text', text: 'Hello' }] });
    const run = await old.startRun(thread.id, { model: 'm' });
    await old.beginAssistantMessage(thread.id, { messageId: 'a1', runId: run.id });
    await old.checkpointMessage(thread.id, 'a1', { parts: [{ type: 'text', text: 'Hi' }] });
    await old.finalizeMessage(thread.id, 'a1', {
      status: 'completed',
      parts: [{ type: 'text', text: 'Hi there' }],
      finishRun: { runId: run.id, usage: { inputTokens: 5 } },
    });
    await old.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: 2,
      includedSequences: [1, 2],
      policyVersion: 'v',
      messagesHash: 'h',
    });
    // Each later function was asked for once, found missing, and not asked for again: a checkpoint and a finalize
    // both write an answer.
    expect(app.sent.filter((query) => query.includes('agent_history_write_answer'))).toHaveLength(1);
    expect(app.sent.filter((query) => query.includes('agent_history_start_run'))).toHaveLength(1);
    expect(warn.mock.calls.flat().join('\n')).toMatch(/lacks the functions of a later release.*migrate\(db\)/);
    warn.mockRestore();
    const readBefore = {
      messages: await old.listMessages(thread.id, { limit: 10 }),
      run: await old.getRun(run.id),
      context: await old.loadContext(thread.id),
    };
    expect(readBefore.run).toMatchObject({ status: 'completed', inputTokens: 5 });

    await migrate(owner);

    expect((await checkSetup(app.db)).ok).toBe(true);
    // A store made before the upgrade keeps its transactional path for what it found missing; a new one writes
    // each in one statement. Both read the 1.0 rows unchanged.
    const upgraded = store();
    expect(await upgraded.listMessages(thread.id, { limit: 10 })).toEqual(readBefore.messages);
    expect(await upgraded.getRun(run.id)).toEqual(readBefore.run);
    expect(await upgraded.loadContext(thread.id)).toEqual(readBefore.context);
    app.sent.length = 0;
    const next = await upgraded.startRun(thread.id);
    await upgraded.beginAssistantMessage(thread.id, { messageId: 'a2', runId: next.id });
    await upgraded.finalizeMessage(thread.id, 'a2', {
      status: 'completed',
      parts: [{ type: 'text', text: 'Again' }],
      finishRun: { runId: next.id },
    });
    // (PGlite's appends go to its simple-query exec, past Drizzle's logger.)
    const functions = app.sent.map((query) => /agent_history_\w+/.exec(query)?.[0]);
    expect(functions.filter((name) => name !== 'agent_history_append_message')).toEqual([
      'agent_history_start_run',
      'agent_history_write_answer',
    ]);
    expect((await upgraded.getRun(next.id)).status).toBe('completed');
    expect((await old.getMessage(thread.id, 'a2')).message.parts).toEqual([{ type: 'text', text: 'Again' }]);
  });
});
