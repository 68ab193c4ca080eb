import { randomUUID } from 'node:crypto';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { sql, type Logger } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { UIMessage } from 'ai';
import { createAgentHistory, DatabaseError, NotFoundError, type TokenCounter } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { idHash, stringsOf, useInMemoryTracing } from '../support/in-memory-tracing.js';
import { range, slowForLongTexts, userMessage } from '../support/fixtures.js';
import { waitUntil } from '../support/time-limits.js';

const tracing = useInMemoryTracing();

describe.each(BACKENDS)('store spans on %s', (backend) => {
  const database = useTestDatabase(backend);
  // A statement slowed by a loaded machine must not give up its slot: the batch sizes below depend on it.
  const history = () =>
    createAgentHistory({ db: database.db, appendBatching: { maxInFlight: 1, stalledAfterMs: 600_000 } });

  it('should record one span per store call, named after the method, with hashed ids, rows and bytes', async () => {
    const tenantId = randomUUID();
    const store = history().forTenant(tenantId);
    const thread = await store.createThread({
      userId: 'user-who-must-not-appear',
      title: 'Title that must not appear',
    });
    const appended = await store.appendMessage(thread.id, userMessage('m-1', 'Text that must not appear'));
    await store.listMessages(thread.id);
    await store.loadContext(thread.id);
    await store.listChatMessages(thread.id);

    expect(tracing.spans().map((span) => span.name)).toEqual([
      'agent-history.store.createThread',
      'agent-history.store.appendMessage',
      'agent-history.store.listMessages',
      'agent-history.store.loadContext',
      'agent-history.store.listChatMessages',
    ]);
    const [create, append, list, load, chat] = tracing.spans();
    expect(append!.kind).toBe(SpanKind.CLIENT);
    expect(append!.status.code).toBe(SpanStatusCode.UNSET);
    expect(append!.attributes).toEqual({
      'db.system.name': 'postgresql',
      'agent_history.operation': 'appendMessage',
      'agent_history.tenant.id_hash': idHash(tenantId),
      'agent_history.thread.id_hash': idHash(thread.id),
      'agent_history.rows': 1,
      'agent_history.append.created': true,
      'agent_history.append.batch_size': 1,
      'agent_history.message.bytes': appended.stored.byteSize,
    });
    expect(create!.attributes['agent_history.thread.id_hash']).toBeUndefined(); // its argument holds no thread id
    expect(list!.attributes['agent_history.rows']).toBe(1);
    expect(load!.attributes['agent_history.rows']).toBe(1);
    expect(chat!.attributes['agent_history.rows']).toBe(1);
    expect(chat!.attributes['agent_history.thread.id_hash']).toBe(idHash(thread.id));
    const strings = tracing.spans().flatMap(stringsOf);
    for (const secret of [thread.id, tenantId, 'user-who-must-not-appear', 'Title that must not appear', 'must not'])
      expect(strings.filter((value) => value.includes(secret))).toEqual([]);
  });

  it('should tell each append how many appends its statement combined', async () => {
    const store = history().forTenant(randomUUID());
    const thread = await store.createThread();
    tracing.reset();
    // The five appends made in one turn leave as one statement; the next one, made alone, as one of its own.
    await Promise.all(range(1, 5).map((index) => store.appendMessage(thread.id, userMessage(`m-${index}`))));
    await store.appendMessage(thread.id, userMessage('m-6'));
    const sizes = tracing
      .named('agent-history.store.appendMessage')
      .map((span) => span.attributes['agent_history.append.batch_size']);
    expect(sizes.sort()).toEqual([1, 5, 5, 5, 5, 5]);
  });

  it("should record a failed call's error code and status, and still reject with the typed error", async () => {
    const store = history().forTenant(randomUUID());
    const missing = randomUUID();
    await expect(store.getThread(missing)).rejects.toThrow(NotFoundError);
    const [span] = tracing.named('agent-history.store.getThread');
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'thread-not-found' });
    expect(span!.attributes['error.type']).toBe('thread-not-found');
    expect(span!.attributes['agent_history.thread.id_hash']).toBe(idHash(missing));
    expect(span!.events).toEqual([]); // no exception event: its message would name the value
  });

  it("should record a database failure's SQLSTATE, and none of the statement's parameters", async () => {
    const tenantId = randomUUID();
    const thread = await history().forTenant(tenantId).createThread();
    let failure: unknown;
    await database.db
      .transaction(async (tx) => {
        // The transaction is aborted, so the append's statement fails with 25P02 whatever it is.
        await tx.execute(sql`select 1 / 0`).catch(() => {});
        const store = createAgentHistory({ db: tx as never }).forTenant(tenantId);
        const message = userMessage('m-1', 'Parameter text that must not appear');
        failure = await store.appendMessage(thread.id, message).catch((error: unknown) => error);
      })
      .catch(() => {}); // the aborted transaction's own rejection
    expect(failure).toBeInstanceOf(DatabaseError);
    const [span] = tracing.named('agent-history.store.appendMessage');
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'database-failed' });
    expect(span!.attributes).toMatchObject({
      'error.type': 'database-failed',
      'db.response.status_code': '25P02',
      'agent_history.error.retryable': false,
    });
    expect(stringsOf(span!).filter((value) => value.includes('must not appear'))).toEqual([]);
  });

  it("should nest under the caller's active span, and nest the context store's calls likewise", async () => {
    const store = history().forTenant(randomUUID());
    const thread = await store.createThread();
    await trace.getTracer('app').startActiveSpan('request', async (request) => {
      await store.appendMessage(thread.id, userMessage('m-1'));
      await store.contextStore(thread.id.toUpperCase()).loadContext();
      request.end();
    });
    const request = tracing.named('request')[0]!;
    const children = tracing.spans().filter((span) => span.parentSpanContext?.spanId === request.spanContext().spanId);
    expect(children.map((span) => span.name)).toEqual([
      'agent-history.store.appendMessage',
      'agent-history.context-store.loadContext',
    ]);
    expect(children[1]!.attributes['agent_history.thread.id_hash']).toBe(idHash(thread.id));
    expect(children[1]!.attributes['agent_history.rows']).toBe(1); // the tail: one message
  });
});

// A statement that waited for a slot is sent when the statement before it finishes: it must run in the async
// context of its own first caller (whose span a driver's instrumentation nests its query under), not in that of
// the statement before it, whose caller may have had its answer and ended its span. Needs a statement in flight
// across turns, which PostgreSQL gives (another writer holds its thread) and PGlite does not.
describe('append statements in their callers’ context on postgres', () => {
  const database = useTestDatabase('postgres', { poolSize: 4 });

  /** The active span when Drizzle sends each append statement (its logger runs in the sender's context). */
  const sentUnder: Array<string | undefined> = [];
  const logger: Logger = {
    logQuery: (query) => {
      if (query.includes('agent_history_append_message')) sentUnder.push(trace.getActiveSpan()?.spanContext().spanId);
    },
  };
  const storeOf = (tokenCounter?: TokenCounter) => {
    sentUnder.length = 0;
    const db = drizzle({ client: (database.db as unknown as { $client: never }).$client, logger });
    const appendBatching = { maxInFlight: 1, stalledAfterMs: 600_000 };
    return createAgentHistory({ db: db as never, appendBatching, ...(tokenCounter ? { tokenCounter } : {}) }).forTenant(
      randomUUID(),
    );
  };
  /** An append of `message` (a short one of its own by default) made in a request's span of its own. */
  const request = (
    store: ReturnType<typeof storeOf>,
    name: string,
    threadId: string,
    { runId, message = userMessage(`${name}-message`) }: { runId?: string; message?: UIMessage } = {},
  ) =>
    trace
      .getTracer('app')
      .startActiveSpan(name, (span) =>
        store.appendMessage(threadId, message, runId ? { runId } : {}).finally(() => span.end()),
      );
  /** The id of the store's `appendMessage` span made within the request `name`. */
  const storeSpanOf = (name: string) => {
    const parent = tracing.named(name)[0]!.spanContext().spanId;
    return tracing
      .named('agent-history.store.appendMessage')
      .find((span) => span.parentSpanContext?.spanId === parent)!
      .spanContext().spanId;
  };

  it('should send a queued append statement under its own caller’s span, not the one of the statement before it', async () => {
    const store = storeOf();
    const [a, b] = [await store.createThread(), await store.createThread()];
    const holder = postgres(database.adminUrl!, { max: 1, onnotice: () => {} });
    try {
      let held!: () => void;
      let release!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      const transaction = holder.begin(async (tx) => {
        await tx`select 1 from agent_thread where id = ${a.id} for update`;
        held();
        await released;
      });
      await holding;
      const first = request(store, 'request-a', a.id); // sent, then waits for the thread another writer holds
      await waitUntil('the first append statement sent', () => sentUnder.length === 1);
      const second = request(store, 'request-b', b.id); // queued: the one slot is taken
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sentUnder).toHaveLength(1);
      release();
      await transaction;
      await Promise.all([first, second]);
    } finally {
      await holder.end();
    }
    expect(sentUnder).toEqual([storeSpanOf('request-a'), storeSpanOf('request-b')]);
  });

  it('should resend each append of a failed batch under its own caller’s span', async () => {
    const store = storeOf();
    const thread = await store.createThread();
    // Made in one turn, the two go as one statement under the first caller's span; the missing run fails it (a
    // foreign key), and each append is resent alone.
    const results = await Promise.allSettled([
      request(store, 'request-a', thread.id),
      request(store, 'request-b', thread.id, { runId: randomUUID() }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    const [a, b] = [storeSpanOf('request-a'), storeSpanOf('request-b')];
    expect(sentUnder).toEqual([a, a, b]);
  });

  it('should keep its own caller’s span for an append that waited in its thread’s lane for a slower one', async () => {
    // The long message is counted over several turns; the short one behind it, to the same thread, is ready first
    // and waits in the thread's lane until the long one's call hands both on. Both go in one statement (under the
    // first caller's span); the short one's missing run fails it, and each is resent under its own caller's span.
    const store = storeOf(slowForLongTexts);
    const thread = await store.createThread();
    const long: UIMessage = { id: 'long', role: 'user', parts: [{ type: 'text', text: 'x '.repeat(20_000) }] };
    const results = await Promise.allSettled([
      request(store, 'request-a', thread.id, { message: long }),
      request(store, 'request-b', thread.id, { runId: randomUUID() }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    const [a, b] = [storeSpanOf('request-a'), storeSpanOf('request-b')];
    expect(sentUnder).toEqual([a, a, b]);
    const sizes = (name: string) =>
      tracing
        .named('agent-history.store.appendMessage')
        .filter((span) => span.parentSpanContext?.spanId === tracing.named(name)[0]!.spanContext().spanId)
        .map((span) => span.attributes['agent_history.append.batch_size']);
    expect([sizes('request-a'), sizes('request-b')]).toEqual([[2], [2]]);
  });
});
