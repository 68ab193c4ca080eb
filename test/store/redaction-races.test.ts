import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgentHistory, VersionConflictError, type TenantHistory } from '../../src/index.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { createContextEngine } from '../../src/context/engine/context-engine.js';
import { resolveModelProfile } from '../../src/tokens/model-profile.js';
import { text } from '../support/fixtures.js';
import { scanForResidue } from '../reliability/support/database-inspection.js';

// Races between a redaction and a fork or a summary write, each interleaving forced: one operation runs inside a
// transaction of a second connection that stays open, the other is started on the store's pool, and the test waits
// until Postgres reports that one waiting for a lock (or until it finished, which is the bug) before it lets the
// first commit. PostgreSQL only: PGlite has one connection, so its operations never interleave (see
// test/store/redaction.test.ts for the sequential case, read → redact → write, which runs on both backends).
describe('redaction races on postgres', () => {
  const database = useTestDatabase('postgres');
  const connections: Array<ReturnType<typeof postgres>> = [];
  afterAll(async () => {
    for (const connection of connections) await connection.end();
  });

  /** A drizzle database on one more connection, as the app login. */
  function secondConnection(): AgentHistoryDatabase {
    const client = postgres(database.appUrl!, { max: 1, onnotice: () => {} });
    connections.push(client);
    return drizzle({ client }) as unknown as AgentHistoryDatabase;
  }

  /**
   * Runs `hold` in a transaction of a second connection and keeps it open (its locks held, its writes uncommitted)
   * until `release()`; `ready` settles once `hold` has run.
   */
  function holdInTransaction(tenantId: string, hold: (store: TenantHistory) => Promise<unknown>) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let signal!: () => void;
    const ready = new Promise<void>((resolve) => (signal = resolve));
    const done = secondConnection().transaction(async (tx) => {
      await hold(createAgentHistory({ db: tx as unknown as AgentHistoryDatabase }).forTenant(tenantId));
      signal();
      await released;
    });
    return { ready: Promise.race([ready, done]), release, done };
  }

  /** Resolves 'waiting' once a backend of this database waits for a lock, or 'finished' when `operation` settles. */
  async function waitsOrFinishes(operation: Promise<unknown>): Promise<'waiting' | 'finished'> {
    let settled = false;
    void operation.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (;;) {
      if (settled) return 'finished';
      const [row] = await database.admin.query<{ waiting: number }>(
        "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      if (row!.waiting > 0) return 'waiting';
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async function contextStates(store: TenantHistory, threadId: string) {
    const { messages } = await store.listMessages(threadId);
    return Object.fromEntries(messages.map((message) => [message.message.id, message.contextState]));
  }

  async function threadWithSecret(secret: string) {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const parent = await store.createThread({ title: 'keys' });
    await store.appendMessage(parent.id, { id: 'm-1', role: 'user', parts: [text(`my key is ${secret}`)] });
    await store.appendMessage(parent.id, { id: 'm-2', role: 'assistant', parts: [text('noted')] });
    return { store, parent };
  }

  it('should make a fork that starts during a redaction wait for it and copy the redacted message', async () => {
    const secret = `Race${randomUUID().slice(0, 8)}Fork`;
    const { store, parent } = await threadWithSecret(secret);
    const redaction = holdInTransaction(store.tenantId, (inner) =>
      inner.redactMessage(parent.id, 'm-1', { spans: [secret], actor: 'dpo', reason: 'leaked' }),
    );
    await redaction.ready;

    const fork = store.forkThread(parent.id, { atSequence: 2 });
    const first = await waitsOrFinishes(fork);
    redaction.release();
    await redaction.done;
    const forked = await fork;

    expect(first).toBe('waiting');
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
    expect(await contextStates(store, forked.id)).toEqual({ 'm-1': 'redacted', 'm-2': 'eligible' });
  });

  it.each(['the source', 'a sibling fork'] as const)(
    'should make a redaction in %s wait for a fork in flight, then redact its copies',
    async (where) => {
      const secret = `Race${randomUUID().slice(0, 8)}Copy`;
      const { store, parent } = await threadWithSecret(secret);
      const sibling = await store.forkThread(parent.id, { atSequence: 1 });
      let forkId = '';
      const fork = holdInTransaction(store.tenantId, async (inner) => {
        forkId = (await inner.forkThread(parent.id, { atSequence: 2 })).id;
      });
      await fork.ready;

      const target = where === 'the source' ? parent.id : sibling.id;
      const redaction = store.redactMessage(target, 'm-1', { actor: 'dpo', reason: 'leaked' });
      const first = await waitsOrFinishes(redaction);
      fork.release();
      await fork.done;
      await redaction;

      expect(first).toBe('waiting');
      expect(await scanForResidue(database.admin, secret)).toEqual([]);
      expect(await contextStates(store, forkId)).toEqual({ 'm-1': 'redacted', 'm-2': 'eligible' });
    },
  );

  it('should make a chunk batch that starts during a redaction of its answer wait for it, then drop the batch', async () => {
    const secret = `Race${randomUUID().slice(0, 8)}Chunk`;
    const { store, parent } = await threadWithSecret(secret);
    await store.beginAssistantMessage(parent.id, { messageId: 'a-1' });
    await store.checkpointMessage(parent.id, 'a-1', { parts: [text(secret)] });
    const redaction = holdInTransaction(store.tenantId, (inner) =>
      inner.redactMessage(parent.id, 'a-1', { actor: 'dpo', reason: 'leaked' }),
    );
    await redaction.ready;

    const batch = store.appendStreamChunks(parent.id, 'a-1', {
      batch: 0,
      chunks: [{ type: 'text-delta', id: 't', delta: secret }],
    });
    const first = await waitsOrFinishes(batch);
    redaction.release();
    await redaction.done;
    await batch;

    expect(first).toBe('waiting');
    // The user's own message m-1 still holds it (its parts and search vector): only the answer was redacted.
    const residues = await scanForResidue(database.admin, secret);
    expect(residues.length).toBeGreaterThan(0);
    expect(residues.filter((residue) => residue.table !== 'agent_message')).toEqual([]);
    const [answer] = await database.admin.query<{ parts: string }>(
      `select parts::text as parts from agent_message where tenant_id = $1 and message_id = 'a-1'`,
      [store.tenantId],
    );
    expect(answer!.parts).not.toContain(secret);
    expect((await store.readStreamChunks(parent.id, 'a-1')).batches).toEqual([]);
  });

  it('should make a generated title that starts during a redaction of its source wait for it, then refuse it', async () => {
    const secret = `Race${randomUUID().slice(0, 8)}Title`;
    const { store, parent } = await threadWithSecret(secret);
    const redaction = holdInTransaction(store.tenantId, (inner) =>
      inner.redactMessage(parent.id, 'm-1', { actor: 'dpo', reason: 'leaked' }),
    );
    await redaction.ready;

    const rename = store.renameThread(parent.id, { title: `Key ${secret}`, derivedFrom: ['m-1', 'm-2'] });
    const first = await waitsOrFinishes(rename);
    redaction.release();
    await redaction.done;

    expect(first).toBe('waiting');
    await expect(rename).rejects.toMatchObject({ code: 'argument-invalid' });
    expect((await store.getThread(parent.id)).title).toBe('keys');
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
  });

  it('should refuse a summary whose covered message is being redacted when it is written', async () => {
    const secret = `Race${randomUUID().slice(0, 8)}Summary`;
    const { store, parent } = await threadWithSecret(secret);
    const view = await store.loadContext(parent.id);
    const redaction = holdInTransaction(store.tenantId, (inner) =>
      inner.redactMessage(parent.id, 'm-1', { actor: 'dpo', reason: 'leaked' }),
    );
    await redaction.ready;

    const write = store.contextStore(parent.id).writeSummary({
      fromSequence: 1,
      throughSequence: 2,
      content: `The user's key is ${secret}.`,
      tokenCount: 8,
      policyVersion: 'v1',
      sourceVersions: view.tail.map(({ sequence, contentVersion }) => ({ sequence, contentVersion })),
    });
    const outcome = write.then(
      () => 'stored',
      (error: unknown) => error,
    );
    const first = await waitsOrFinishes(write);
    redaction.release();
    await redaction.done;

    expect(first).toBe('waiting');
    expect(await outcome).toBeInstanceOf(VersionConflictError);
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
    expect(await store.listSummaries(parent.id)).toEqual([]);
  });

  it('should make a redaction wait for a summary write in flight, then withdraw the summary', async () => {
    const secret = `Race${randomUUID().slice(0, 8)}Late`;
    const { store, parent } = await threadWithSecret(secret);
    const view = await store.loadContext(parent.id);
    const write = holdInTransaction(store.tenantId, (inner) =>
      inner.contextStore(parent.id).writeSummary({
        fromSequence: 1,
        throughSequence: 2,
        content: `The user's key is ${secret}.`,
        tokenCount: 8,
        policyVersion: 'v1',
        sourceVersions: view.tail.map(({ sequence, contentVersion }) => ({ sequence, contentVersion })),
      }),
    );
    await write.ready;

    const redaction = store.redactMessage(parent.id, 'm-1', { actor: 'dpo', reason: 'leaked' });
    const first = await waitsOrFinishes(redaction);
    write.release();
    await write.done;
    await redaction;

    expect(first).toBe('waiting');
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
    expect((await store.listSummaries(parent.id)).map((summary) => summary.stale)).toEqual([true]);
  });
});

// The summarizer's model call is seconds long: a redaction that commits meanwhile must not leave a valid summary
// made from the secret. The summarizer itself redacts before it answers, so the interleaving is forced on both
// backends (no concurrency needed: read → redact → write).
describe.each(BACKENDS)('a summary computed across a redaction on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should be refused, leave the secret in no table, and not reach the context', async () => {
    const secret = `zq${randomUUID().slice(0, 8)}summary`;
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    for (let turn = 0; turn < 24; turn++) {
      const words = Array.from({ length: 40 }, (_, index) => `word${(turn * 40 + index) % 97}`).join(' ');
      const said = turn === 1 ? `my key is ${secret} ${words}` : words;
      await store.appendMessage(thread.id, { id: `u-${turn}`, role: 'user', parts: [text(`Question: ${said}`)] });
      await store.appendMessage(thread.id, { id: `a-${turn}`, role: 'assistant', parts: [text(`Answer: ${words}`)] });
    }
    await store.appendMessage(thread.id, { id: 'u-last', role: 'user', parts: [text('And the last question?')] });
    const calls: string[] = [];
    const engine = createContextEngine({
      store: store.contextStore(thread.id),
      profile: resolveModelProfile({
        modelId: 'race-small',
        overrides: { family: 'openai', contextWindow: 3_000, maxOutputTokens: 256 },
      }),
      policy: { summary: { reserveTokens: 300 } },
      summarizer: {
        id: 'redacts-meanwhile',
        summarize: async ({ transcript }) => {
          calls.push(transcript);
          if (calls.length === 1)
            await store.redactMessage(thread.id, 'u-1', { spans: [secret], actor: 'dpo', reason: 'leaked' });
          return transcript.includes(secret) ? `The user's key is ${secret}.` : 'The user asked questions.';
        },
      },
    });

    const { messages, report } = await engine.buildInitialContext({ instructions: 'Be brief.' });

    expect(calls.some((transcript) => transcript.includes(secret))).toBe(true);
    const stage = report.stages.find((entry) => entry.stage === 'summarize') as { status?: string; error?: string };
    expect(stage.status).toBe('failed');
    expect(stage.error).toMatch(/could not be stored: Stale summary source \(message 3\) version: expected 1/);
    expect(JSON.stringify(messages)).not.toContain(secret);
    expect(await scanForResidue(database.admin, secret)).toEqual([]);
    expect(await store.listSummaries(thread.id)).toEqual([]);
  });
});
