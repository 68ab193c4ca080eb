import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidTenantError, NotFoundError } from '../../../src/index.js';
import type { TenantHistory } from '../../../src/store/create-agent-history.js';
import { rowsOf, type AgentHistoryDatabase } from '../../../src/tenant/database.js';
import { APP_LOGIN } from '../../support/global-setup.js';
import { useTestDatabase } from '../../support/test-database.js';
import { TABLES } from '../../support/tables.js';
import { dumpTenants } from './database-inspection.js';
import {
  describeDirtyConnection,
  probePostgresPool,
  probeSingleConnection,
  type ConnectionState,
} from './pool-probe.js';
import { seededTally } from './reliability-report.js';
import { scaled, scaledTimeout } from './reliability-scale.js';
import type { SeededRandom } from './seeded-random.js';
import {
  FILE_CALL_ID,
  SEED_EMBEDDER,
  seedTenant,
  SHARED_USER_ID,
  SHARED_WORD,
  type TenantFixture,
} from './seed-tenant.js';

/** Cross-tenant operations per backend (PGlite serializes everything, so fewer there). */
const CROSS_TENANT_OPERATIONS = { postgres: scaled(10_000), pglite: scaled(1_000) };
const VICTIMS = 3;
const ATTACKERS = 3;
const POOL_SIZE = 4;
/** Operations in flight at once (three times the pool, so calls queue for connections). */
const BATCH = 12;
/** The victims' rows are compared byte for byte every this many operations, and at the end. */
const DUMP_EVERY = 2_500;
/** A clock far in the future: every lease has expired for it, every thread is older than it. */
const FAR_FUTURE = new Date(Date.now() + 10 * 365 * 86_400_000);

/** The ids a cross-tenant operation aims at: a victim's, or made-up ones of the same shape (for the oracle check). */
interface Target {
  threadId: string;
  messageId: string;
  runId: string;
  streamingThreadId: string;
  streamingMessageId: string;
}

interface Attacker {
  store: TenantHistory;
  /** The same tenant with a clock far in the future (lease recovery). */
  futureStore: TenantHistory;
  fixture: TenantFixture;
}

type NotFoundOperation = (attacker: Attacker, target: Target, random: SeededRandom, serial: number) => Promise<unknown>;

const text = (value: string) => [{ type: 'text', text: value }];

/** Operations that must end in NotFoundError when aimed at another tenant's (or a missing) row. */
const NOT_FOUND_OPERATIONS: Record<string, NotFoundOperation> = {
  'read:getThread': ({ store }, t) => store.getThread(t.threadId),
  'read:getMessage': ({ store }, t) => store.getMessage(t.threadId, t.messageId),
  'read:getMessage-in-own-thread': ({ store, fixture }, t) => store.getMessage(fixture.threadIds[0]!, t.messageId),
  'read:getRun': ({ store }, t) => store.getRun(t.runId),
  'read:loadContext': ({ store }, t) => store.loadContext(t.threadId),
  'read:listSummaries': ({ store }, t) => store.listSummaries(t.threadId),
  'read:streamToolPayload': ({ store }, t) =>
    store.streamToolPayload(t.streamingThreadId, t.streamingMessageId, { toolCallId: FILE_CALL_ID }),
  'read:getMessage-with-payloads': ({ store }, t) =>
    store.getMessage(t.streamingThreadId, t.streamingMessageId, { include: 'payloads' }),
  'page:listMessages': ({ store }, t, random) =>
    store.listMessages(t.threadId, {
      limit: random.between(1, 50),
      before: random.chance(0.5) ? random.between(1, 10) : undefined,
    }),
  'update:renameThread': ({ store }, t) => store.renameThread(t.threadId, { title: 'pwned' }),
  'update:updateThreadMetadata': ({ store }, t) =>
    store.updateThreadMetadata(t.threadId, { metadata: { pwned: true } }),
  'update:pinMessage': ({ store }, t, random) =>
    random.chance(0.5) ? store.pinMessage(t.threadId, t.messageId) : store.unpinMessage(t.threadId, t.messageId),
  'update:checkpointMessage': ({ store }, t) =>
    store.checkpointMessage(t.streamingThreadId, t.streamingMessageId, { parts: text('pwned') }),
  'update:finalizeMessage': ({ store }, t, random) =>
    store.finalizeMessage(t.streamingThreadId, t.streamingMessageId, {
      status: random.pick(['completed', 'failed', 'cancelled'] as const),
      parts: text('pwned'),
    }),
  'update:reopenAssistantMessage': ({ store }, t) =>
    store.reopenAssistantMessage(t.threadId, t.messageId, { expectedParts: text('x'), parts: text('pwned') }),
  'update:finishRun': ({ store }, t) => store.finishRun(t.runId, { status: 'failed', usage: { inputTokens: 1 } }),
  'update:failRun': ({ store }, t) => store.failRun(t.runId, { error: new Error('pwned') }),
  'append:appendMessage': ({ store }, t, _random, serial) =>
    store.appendMessage(t.threadId, { id: `x-${serial}`, role: 'user', parts: text('pwned') }),
  'append:appendMessage-with-foreign-run': ({ store, fixture }, t, _random, serial) =>
    store.appendMessage(
      fixture.threadIds[0]!,
      { id: `x-${serial}`, role: 'assistant', parts: text('pwned') },
      { runId: t.runId },
    ),
  'append:beginAssistantMessage': ({ store }, t, _random, serial) =>
    store.beginAssistantMessage(t.threadId, { messageId: `x-${serial}` }),
  'append:startRun': ({ store }, t) => store.startRun(t.threadId, { model: 'pwned' }),
  'exclude:excludeMessages': ({ store }, t) => store.excludeMessages(t.threadId, [t.messageId], { reason: 'pwned' }),
  'exclude:includeMessages': ({ store }, t) => store.includeMessages(t.threadId, [t.messageId]),
  'redact:redactMessage': ({ store }, t, random) =>
    store.redactMessage(t.threadId, t.messageId, {
      spans: random.chance(0.5) ? ['zz'] : undefined,
      actor: 'attacker',
      reason: 'pwned',
    }),
  'delete:deleteThread': ({ store }, t) => store.deleteThread(t.threadId),
  'delete:softDeleteThread': ({ store }, t) => store.softDeleteThread(t.threadId),
  'fork:forkThread': ({ store }, t, random) => store.forkThread(t.threadId, { atSequence: random.between(0, 3) }),
  'snapshot:writeSnapshot': ({ store }, t, random) =>
    store.writeSnapshot(t.threadId, {
      expectedVersion: random.between(0, 2),
      throughSequence: 1,
      includedSequences: [1],
      policyVersion: 'pwned',
      messagesHash: 'pwned',
    }),
  'memory:getWorkingMemory': ({ store }, t) => store.getWorkingMemory({ scope: 'thread', threadId: t.threadId }),
  'memory:updateWorkingMemory': ({ store }, t, random) =>
    store.updateWorkingMemory({
      scope: 'thread',
      threadId: t.threadId,
      content: 'pwned',
      expectedVersion: random.between(0, 2),
    }),
  'memory:recallMessages': ({ store }, t) => store.recallMessages({ query: SHARED_WORD, threadId: t.threadId }),
  'summary:writeSummary': ({ store }, t) =>
    store.writeSummary(t.threadId, {
      fromSequence: 1,
      throughSequence: 1,
      content: 'pwned',
      tokenCount: 1,
      policyVersion: 'pwned',
    }),
};
const NOT_FOUND_NAMES = Object.keys(NOT_FOUND_OPERATIONS);

/**
 * The isolation suite for one backend: random cross-tenant operations by attacker tenants against victim tenants
 * through the store API, with the victims' rows compared byte for byte, every pooled connection probed after
 * every batch, and the no-tenant checks. One test file per backend, so the two run in parallel.
 */
export function defineIsolationSuite(backend: keyof typeof CROSS_TENANT_OPERATIONS): void {
  describe(`tenant isolation on ${backend}`, () => {
    const database = useTestDatabase(backend, { poolSize: 1 });
    let db: AgentHistoryDatabase;
    let client: postgres.Sql | undefined;
    let loginUser: string;

    beforeAll(async () => {
      if (backend === 'postgres') {
        // Our own pool over the same plain login role, so the suite can reach each of its connections.
        client = postgres(database.appUrl!, { max: POOL_SIZE, onnotice: () => {} });
        db = drizzle({ client }) as unknown as AgentHistoryDatabase;
        loginUser = APP_LOGIN;
      } else {
        db = database.db;
        loginUser = 'postgres';
      }
    });
    // Runs before useTestDatabase's own afterAll (registered first), which closes the database.
    afterAll(async () => {
      await client?.end();
    });

    const probe = (): Promise<ConnectionState[]> =>
      client ? probePostgresPool(client, POOL_SIZE) : probeSingleConnection(db);

    it(
      'should answer every cross-tenant operation with NotFoundError or an empty result and leave the victims byte-identical',
      async () => {
        const { random, tally } = seededTally(`isolation-${backend}`);
        const history = createAgentHistory({ db });
        const futureHistory = createAgentHistory({ db, _internal: { now: () => FAR_FUTURE } });

        const victims: TenantFixture[] = [];
        for (let index = 0; index < VICTIMS; index++)
          victims.push(await seedTenant(history.forTenant(randomUUID()), random));
        const attackers: Attacker[] = [];
        for (let index = 0; index < ATTACKERS; index++) {
          const tenantId = randomUUID();
          attackers.push({
            store: history.forTenant(tenantId),
            futureStore: futureHistory.forTenant(tenantId),
            fixture: await seedTenant(history.forTenant(tenantId), random),
          });
        }
        const victimTenantIds = victims.map((victim) => victim.tenantId);
        const victimThreadIds = new Set(victims.flatMap((victim) => [...victim.threadIds, victim.softDeletedThreadId]));
        const victimRowIds = new Set(victims.flatMap((victim) => victim.messages.map((message) => message.rowId)));
        const victimCanaries = victims.map((victim) => victim.canary);
        const before = await dumpTenants(database.admin, victimTenantIds);
        expect(before.agent_message.length).toBeGreaterThan(0);
        expect(before.agent_tool_payload.length).toBeGreaterThanOrEqual(VICTIMS);
        expect(before.agent_memory.filter((row) => row.includes(',recall,')).length).toBeGreaterThan(VICTIMS);

        const victimTarget = (victim: TenantFixture): Target => {
          const message = random.pick(victim.messages);
          const threadId = random.chance(0.2) ? victim.softDeletedThreadId : message.threadId;
          return {
            threadId,
            messageId: message.messageId,
            runId: victim.runIds[0]!,
            streamingThreadId: victim.streaming.threadId,
            streamingMessageId: victim.streaming.messageId,
          };
        };
        const missingTarget = (): Target => {
          return {
            threadId: randomUUID(),
            messageId: `m-${random.word(12)}`,
            runId: randomUUID(),
            streamingThreadId: randomUUID(),
            streamingMessageId: `m-${random.word(12)}`,
          };
        };
        const expectOwnThreads = (name: string, threadIds: string[]) => {
          const leaked = threadIds.filter((id) => victimThreadIds.has(id));
          tally.expect(leaked.length === 0, `${name} returned another tenant's thread`, () => leaked.join(', '));
        };
        const expectOwnRows = (name: string, rowIds: string[]) => {
          const leaked = rowIds.filter((id) => victimRowIds.has(id));
          tally.expect(leaked.length === 0, `${name} returned another tenant's message`, () => leaked.join(', '));
        };

        let serial = 0;
        const crossTenantNotFound = async (attacker: Attacker, name: string) => {
          const operation = NOT_FOUND_OPERATIONS[name]!;
          const target = victimTarget(random.pick(victims));
          const compareWithMissing = random.chance(0.1);
          tally.attempt(name);
          const [foreign, missing] = await Promise.all([
            settle(operation(attacker, target, random, serial++)),
            compareWithMissing ? settle(operation(attacker, missingTarget(), random, serial++)) : undefined,
          ]);
          if (foreign.ok) {
            tally.violation(`${name} succeeded across tenants`, JSON.stringify(foreign.value) ?? 'undefined');
            return;
          }
          if (!(foreign.error instanceof NotFoundError)) {
            tally.violation(`${name} did not raise NotFoundError`, describeError(foreign.error));
            return;
          }
          if (missing) {
            // No existence oracle: the same error class, code and message (ids aside) as for a row that does not exist.
            tally.attempt('oracle:compared-with-missing-id');
            const shape = (outcome: Settled) =>
              outcome.ok
                ? 'succeeded'
                : `${(outcome.error as Error).name} ${(outcome.error as NotFoundError).code} ${(outcome.error as Error).message.replaceAll(/"[^"]*"/g, '<id>')}`;
            tally.expect(
              shape(foreign) === shape(missing),
              `${name} tells a foreign row from a missing one`,
              () => `${shape(foreign)} vs ${shape(missing)}`,
            );
          }
        };

        const SCOPED_OPERATIONS: Record<string, (attacker: Attacker) => Promise<void>> = {
          'page:listThreads': async ({ store }) => {
            // A hand-made cursor that names a victim's thread: keyset paging must still stay inside the tenant.
            const crafted = Buffer.from(
              JSON.stringify([
                FAR_FUTURE.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
                random.pick([...victimThreadIds]),
              ]),
            ).toString('base64url');
            const page = await store.listThreads({
              userId: random.chance(0.5) ? SHARED_USER_ID : undefined,
              limit: random.between(1, 50),
              cursor: random.chance(0.5) ? crafted : undefined,
            });
            expectOwnThreads(
              'listThreads',
              page.threads.map((thread) => thread.id),
            );
          },
          'search:searchMessages': async ({ store }) => {
            const query = random.chance(0.5) ? SHARED_WORD : random.pick(victimCanaries);
            const hits = await store.searchMessages(query, {
              userId: random.chance(0.3) ? SHARED_USER_ID : undefined,
              limit: random.between(1, 100),
            });
            expectOwnThreads(
              'searchMessages',
              hits.map((hit) => hit.threadId),
            );
            tally.expect(
              query === SHARED_WORD || hits.length === 0,
              "searchMessages found another tenant's canary",
              () => `${query}: ${hits.length} hits`,
            );
          },
          'search:searchMessages-in-foreign-thread': async ({ store }) => {
            const hits = await store.searchMessages(random.chance(0.5) ? SHARED_WORD : random.pick(victimCanaries), {
              threadId: random.pick([...victimThreadIds]),
            });
            tally.expect(hits.length === 0, 'searchMessages in a foreign thread returned hits', () =>
              JSON.stringify(hits[0]),
            );
          },
          'memory:recallMessages-from-own-thread': async ({ store, fixture }) => {
            const hits = await store.recallMessages({
              query: random.chance(0.5) ? SHARED_WORD : random.pick(victimCanaries),
              threadId: random.pick(fixture.threadIds),
              limit: random.between(1, 50),
              embedder: random.chance(0.5) ? SEED_EMBEDDER : undefined,
            });
            expectOwnThreads(
              'recallMessages',
              hits.map((hit) => hit.sourceThreadId),
            );
            expectOwnRows(
              'recallMessages',
              hits.map((hit) => hit.sourceMessageId),
            );
          },
          'memory:embedPendingMemory': async ({ store }) => {
            await store.embedPendingMemory({ embedder: SEED_EMBEDDER, batchSize: random.between(1, 20) });
          },
          'recover:recoverAbandonedMessages': async ({ futureStore }) => {
            const recovered = await futureStore.recoverAbandonedMessages();
            expectOwnRows(
              'recoverAbandonedMessages',
              recovered.map((message) => message.rowId),
            );
          },
          'delete:deleteThreadsOlderThan': async () => {
            // A scratch tenant, so that expiring "everything older than the far future" only ever costs it.
            const scratch = history.forTenant(randomUUID());
            await scratch.createThread({ userId: SHARED_USER_ID });
            const deleted = await scratch.deleteThreadsOlderThan({
              olderThan: FAR_FUTURE,
              batchSize: random.between(1, 5),
            });
            tally.expect(
              deleted === 1,
              'retention deleted threads of another tenant',
              () => `deleted ${deleted}, expected 1`,
            );
          },
          'tenant:invalid-tenant-id': async () => {
            const bad = random.pick([
              '',
              'not-a-uuid',
              `${randomUUID()} `,
              `'; set role postgres; --`,
              '00000000-0000-0000-0000-00000000000g',
              null,
              42,
            ]);
            const outcome = await settle(Promise.resolve().then(() => history.forTenant(bad as string)));
            tally.expect(
              !outcome.ok && outcome.error instanceof InvalidTenantError,
              'a malformed tenant id was accepted',
              () => JSON.stringify(bad),
            );
          },
        };
        const SCOPED_NAMES = Object.keys(SCOPED_OPERATIONS);

        const OWN_OPERATIONS: Record<string, (attacker: Attacker) => Promise<void>> = {
          'own:appendMessage-and-listMessages': async ({ store, fixture }) => {
            const threadId = fixture.threadIds[0]!;
            await store.appendMessage(threadId, {
              id: `own-${serial++}`,
              role: 'user',
              parts: text(`${SHARED_WORD} own`),
            });
            const page = await store.listMessages(threadId, { limit: 20 });
            expectOwnRows(
              'listMessages',
              page.messages.map((message) => message.rowId),
            );
          },
          'own:loadContext': async ({ store, fixture }) => {
            const view = await store.loadContext(random.pick(fixture.threadIds));
            expectOwnRows(
              'loadContext',
              view.tail.map((message) => message.rowId),
            );
          },
        };
        const OWN_NAMES = Object.keys(OWN_OPERATIONS);

        const noTenantChecks = async () => {
          tally.attempt('no-tenant:zero-rows');
          for (const tenant of [null, '', randomUUID()]) {
            const counts = await countAsAppRole(db, tenant);
            tally.expect(
              counts.every((count) => count === 0),
              'rows visible without the tenant set',
              () => `tenant ${JSON.stringify(tenant)}: ${counts.join(',')}`,
            );
          }
          if (client) {
            tally.attempt('no-tenant:no-role-fails-closed');
            const outcome = await settle(client.unsafe('select count(*) from agent_message'));
            tally.expect(
              !outcome.ok && (outcome.error as { code?: string }).code === '42501',
              'the login role read a table without switching role',
              () => (outcome.ok ? 'rows returned' : describeError(outcome.error)),
            );
          }
          const stranger = history.forTenant(randomUUID());
          const [threads, hits] = await Promise.all([
            stranger.listThreads({ limit: 200 }),
            stranger.searchMessages(SHARED_WORD, { limit: 100 }),
          ]);
          tally.expect(
            threads.threads.length === 0 && hits.length === 0,
            'a new tenant sees rows',
            () => `${threads.threads.length} threads, ${hits.length} hits`,
          );
        };

        const compareVictims = async () => {
          tally.attempt('victims:byte-compare');
          const after = await dumpTenants(database.admin, victimTenantIds);
          for (const table of TABLES) {
            tally.expect(
              JSON.stringify(after[table]) === JSON.stringify(before[table]),
              `victim rows changed in ${table}`,
              () => `${before[table].length} rows before, ${after[table].length} after`,
            );
          }
        };

        const crossTenantTarget = CROSS_TENANT_OPERATIONS[backend];
        let crossTenant = 0;
        let nextDump = DUMP_EVERY;
        while (crossTenant < crossTenantTarget) {
          const batch: Promise<void>[] = [];
          const names: string[] = [];
          for (let slot = 0; slot < BATCH && crossTenant < crossTenantTarget; slot++) {
            const attacker = random.pick(attackers);
            const roll = random.next();
            if (roll < 0.8) {
              crossTenant++;
              const name = random.pick(NOT_FOUND_NAMES);
              names.push(name);
              batch.push(crossTenantNotFound(attacker, name));
            } else if (roll < 0.92) {
              crossTenant++;
              const name = random.pick(SCOPED_NAMES);
              tally.attempt(name);
              names.push(name);
              batch.push(SCOPED_OPERATIONS[name]!(attacker));
            } else {
              const name = random.pick(OWN_NAMES);
              tally.attempt(name);
              names.push(name);
              batch.push(OWN_OPERATIONS[name]!(attacker));
            }
          }
          const outcomes = await Promise.allSettled(batch);
          for (const outcome of outcomes) {
            if (outcome.status === 'rejected')
              tally.violation('an operation threw unexpectedly', describeError(outcome.reason));
          }
          // After every batch of transactions: no pooled connection may still carry a tenant or a role.
          tally.attempt('pool:connections-probed', client ? POOL_SIZE : 1);
          for (const state of await probe()) {
            const dirty = describeDirtyConnection(state, loginUser);
            tally.expect(
              dirty === null,
              'a pooled connection carries state after its transaction',
              () => `${dirty} after ${names.join(', ')}`,
            );
          }
          if (crossTenant >= nextDump) {
            nextDump += DUMP_EVERY;
            await noTenantChecks();
            await compareVictims();
          }
        }
        await noTenantChecks();
        await compareVictims();
        tally.note('cross-tenant-operations', crossTenant);
        tally.record();
        expect(tally.violations).toEqual([]);
        expect(crossTenant).toBeGreaterThanOrEqual(crossTenantTarget);
      },
      scaledTimeout(backend === 'postgres' ? 120_000 : 90_000),
    );
  });
}

/** Counts each table's rows as the application role with the given tenant setting (null: not set at all). */
async function countAsAppRole(db: AgentHistoryDatabase, tenant: string | null): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('role', 'agent_history_app', true)`);
    if (tenant !== null) await tx.execute(sql`select set_config('app.tenant_id', ${tenant}, true)`);
    const counts: number[] = [];
    for (const table of TABLES) {
      const [row] = rowsOf<{ n: number }>(await tx.execute(sql.raw(`select count(*)::int as n from ${table}`)));
      counts.push(Number(row!.n));
    }
    return counts;
  });
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };
async function settle(promise: Promise<unknown>): Promise<Settled> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name} ${(error as { code?: string }).code ?? ''}: ${error.message}`;
  return String(error);
}
