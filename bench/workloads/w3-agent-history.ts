// W3 for agent-history: threads of several lengths, seeded in bulk as the superuser (INSERT … SELECT over
// generate_series, with the next_sequence, byte sizes and token counts the store itself would have written),
// then read through the store's API as the application role:
//   newest50         listChatMessages(thread, { limit: 50 }): the page a chat window reads
//   deepPage         listChatMessages(thread, { limit: 50, before: ≈ the middle })
//   newest50Stored   listMessages(thread, { limit: 50 }): the same page with every stored field
//   newest50Floor    the guarded floor, not the store: a UIMessage's columns and its sequence, newest 50, under
//                    forced RLS as the app login in one plpgsql function (when the caller gives `floor`)
//   contextSnapshot  loadContext(thread): the snapshot near the end (+ its summary) and the short tail after it
//   contextNoSnapshot loadContext(thread, { maxTailMessages: 50 }) with the snapshot marked stale
//   whole            every page of listChatMessages (500 per page), oldest first
// Sequence q of a thread of S messages carries template (S - q) mod 256, so the newest 50 of every thread carry
// byte-identical payloads; the deep page's `before` is aligned to the template period for the same reason.
import { countStoredMessageTokens, storedTokenCountId } from '../../src/tokens/count-stored-message-tokens.js';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';
import type { LoadedThreadContext } from '../../src/model/context-store.js';
import type { MessagePage } from '../../src/store/list-messages.js';
import type { ChatWindowMessage, ChatWindowPage } from '../../src/store/list-chat-messages.js';
import type { MessageFactory } from '../messages.js';
import { loadWholeChat, type TenantStore } from '../peers/agent-history-peer.js';
import { sampleInterleaved, SHORT_READ_WARMUP_CALLS, type TimedCase } from './time-operation.js';

/** Superuser SQL on the benchmark database (postgres-js `unsafe` or PGlite `query`). */
export type AdminQuery = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

export interface SeededThread {
  size: number;
  threadId: string;
  snapshotBoundary: number;
  deepBefore: number;
  seedMs: number;
}

const PAGE = 50;
const TEMPLATE_COUNT = 256;

/** `before` for the deep page: near the middle, at a multiple of the template period from the end. */
export function deepPageBefore(size: number): number {
  return size + 1 - TEMPLATE_COUNT * Math.round(size / (2 * TEMPLATE_COUNT));
}

export async function loadTemplates(admin: AdminQuery, factory: MessageFactory) {
  const tokenCounter = await loadO200kTokenCounter();
  const rows = factory.templates.map((template, idx) => {
    const partsJson = JSON.stringify(template.parts);
    return {
      idx,
      role: template.role,
      parts: template.parts,
      byteSize: Buffer.byteLength(partsJson) + 2,
      tokenCount: countStoredMessageTokens({
        message: { id: `template-${idx}`, role: template.role, parts: template.parts } as never,
        tokenCounter,
      }),
    };
  });
  // The parts as json: each template's text as the store writes it (JSON.stringify), as the store would store it.
  await admin(`create table if not exists bench_template (idx int primary key, role agent_message_role not null, parts json not null,
    byte_size int not null, token_count int not null)`);
  await admin(
    `insert into bench_template select (e->>'idx')::int, (e->>'role')::agent_message_role, e->'parts',
    (e->>'byteSize')::int, (e->>'tokenCount')::int from json_array_elements($1::text::json) e on conflict do nothing`,
    [JSON.stringify(rows)],
  );
}

/**
 * Creates the guarded floor of a chat window's page (superuser; not the package's): the newest 50 messages' id, role,
 * parts, metadata and sequence under forced row-level security as the application role, the tenant set for the
 * function's transaction as the store's read functions set it, and nothing else (no thread check, no lifecycle
 * columns). Call it as the app login: `select * from bench_guarded_chat_page(tenant, thread)`.
 */
export async function createGuardedChatPage(admin: AdminQuery) {
  await admin(`create or replace function bench_guarded_chat_page(p_tenant uuid, p_thread uuid)
    returns table (message_id text, role text, parts json, metadata jsonb, sequence bigint)
    language plpgsql stable set enable_sort = off as $$
    begin
      perform set_config('app.tenant_id', p_tenant::text, true);
      perform set_config('app.user_id', '', true);
      perform set_config('role', 'agent_history_app', true);
      return query select m.message_id, m.role::text, m.parts, m.metadata, m.sequence from agent_message m
        where m.tenant_id = p_tenant and m.thread_id = p_thread and m.deleted_at is null
        order by m.sequence desc limit 50;
    end $$`);
  await admin(`grant execute on function bench_guarded_chat_page(uuid, uuid) to agent_history_app`);
}

export async function seedAgentHistoryThreads({
  store,
  admin,
  sizes,
  snapshotTail,
}: {
  store: TenantStore;
  admin: AdminQuery;
  sizes: number[];
  snapshotTail: number;
}): Promise<SeededThread[]> {
  const seeded: SeededThread[] = [];
  const tokenCounterId = storedTokenCountId(await loadO200kTokenCounter());
  for (const size of sizes) {
    const started = performance.now();
    const thread = await store.createThread({ title: `w3-${size}` });
    await admin(
      `insert into agent_message (tenant_id, thread_id, sequence, message_id, role, status, parts, metadata, byte_size,
         token_count, token_counter_id, created_at, updated_at, completed_at)
       select $1::uuid, $2::uuid, q, 'seed-' || q, t.role, 'completed', t.parts, '{}'::jsonb, t.byte_size, t.token_count, $4::text,
         now() - make_interval(secs => $3::int - q), now() - make_interval(secs => $3::int - q), now() - make_interval(secs => $3::int - q)
       from generate_series(1, $3::int) q join bench_template t on t.idx = ($3::int - q) % ${TEMPLATE_COUNT}`,
      [store.tenantId, thread.id, size, tokenCounterId],
    );
    await admin(`update agent_thread set next_sequence = $2::bigint, last_message_at = now() where id = $1::uuid`, [
      thread.id,
      size,
    ]);
    const boundary = Math.max(1, size - snapshotTail);
    const summary = await store.writeSummary(thread.id, {
      fromSequence: 1,
      throughSequence: boundary,
      content: `Summary of messages 1-${boundary}. `.repeat(40),
      tokenCount: 400,
      policyVersion: 'bench',
    });
    await store.writeSnapshot(thread.id, {
      expectedVersion: 0,
      throughSequence: boundary,
      summaryId: summary.id,
      includedSequences: Array.from({ length: Math.min(20, boundary) }, (_, index) => boundary - index).reverse(),
      policyVersion: 'bench',
      messagesHash: 'bench',
    });
    seeded.push({
      size,
      threadId: thread.id,
      snapshotBoundary: boundary,
      deepBefore: deepPageBefore(size),
      seedMs: performance.now() - started,
    });
  }
  await admin('vacuum analyze');
  return seeded;
}

/** Every operation on every thread; sizes (and the first and deep pages) are interleaved, see {@link sampleInterleaved}. */
export async function measureAgentHistoryThreads({
  store,
  admin,
  threads,
  rounds,
  wholeRounds,
  wholeMax = Infinity,
  floor,
}: {
  store: TenantStore;
  admin: AdminQuery;
  threads: SeededThread[];
  rounds: number;
  wholeRounds: number;
  /** The largest thread read whole. @default every size */
  wholeMax?: number;
  /** Reads a thread's newest 50 by the guarded floor, as the app login (see {@link createGuardedChatPage}). */
  floor?: (threadId: string) => Promise<unknown[]>;
}) {
  const pages: TimedCase[] = threads.flatMap(({ size, threadId, deepBefore }) => [
    {
      key: `${size}:newest50`,
      operation: () => store.listChatMessages(threadId, { limit: PAGE }),
      check: (page: ChatWindowPage) =>
        page.messages.length === Math.min(PAGE, size) && page.messages.at(-1)!.sequence === size,
    },
    {
      key: `${size}:deepPage`,
      operation: () => store.listChatMessages(threadId, { limit: PAGE, before: deepBefore }),
      check: (page: ChatWindowPage) =>
        page.messages.length === Math.min(PAGE, deepBefore - 1) && page.messages.at(-1)!.sequence === deepBefore - 1,
    },
    {
      key: `${size}:newest50Stored`,
      operation: () => store.listMessages(threadId, { limit: PAGE }),
      check: (page: MessagePage) =>
        page.messages.length === Math.min(PAGE, size) && page.messages[0]!.sequence === size,
    },
    ...(floor === undefined
      ? []
      : [
          {
            key: `${size}:newest50Floor`,
            operation: () => floor(threadId),
            check: (rows: unknown[]) => rows.length === Math.min(PAGE, size),
          },
        ]),
  ]);
  const timings = await sampleInterleaved(pages, rounds, { warmupCalls: SHORT_READ_WARMUP_CALLS });
  const threadIds = threads.map(({ threadId }) => threadId);
  // The same thread without its snapshot: mark it stale (loadContext skips stale snapshots), then restore it.
  await admin('update agent_context_snapshot set stale = true where thread_id = any($1::uuid[])', [threadIds]);
  const withoutSnapshot = await sampleInterleaved(
    threads.map(({ size, threadId }) => ({
      key: `${size}:contextNoSnapshot`,
      operation: () => store.loadContext(threadId, { maxTailMessages: PAGE }),
      check: (view: LoadedThreadContext) =>
        view.snapshot === null && view.tail.length === Math.min(PAGE, size) && view.tail.at(-1)!.sequence === size,
    })),
    rounds,
    { warmupCalls: SHORT_READ_WARMUP_CALLS },
  );
  await admin('update agent_context_snapshot set stale = false where thread_id = any($1::uuid[])', [threadIds]);
  const withSnapshot = await sampleInterleaved(
    threads.map(({ size, threadId, snapshotBoundary }) => ({
      key: `${size}:contextSnapshot`,
      operation: () => store.loadContext(threadId),
      check: (view: LoadedThreadContext) =>
        view.snapshot?.throughSequence === snapshotBoundary &&
        view.summary !== null &&
        view.tail.length === size - snapshotBoundary,
    })),
    rounds,
    { warmupCalls: SHORT_READ_WARMUP_CALLS },
  );
  const whole = await sampleInterleaved(
    threads
      .filter(({ size }) => size <= wholeMax)
      .map(({ size, threadId }) => ({
        key: `${size}:whole`,
        operation: () => loadWholeChat(store, threadId),
        check: (messages: ChatWindowMessage[]) =>
          messages.length === size && messages[0]!.sequence === 1 && messages.at(-1)!.sequence === size,
      })),
    wholeRounds,
  );
  const all = new Map([...timings, ...withoutSnapshot, ...withSnapshot, ...whole]);
  return threads.map(({ size, deepBefore }) => ({
    size,
    deepBefore,
    ...Object.fromEntries(
      ['newest50', 'deepPage', 'newest50Stored', 'newest50Floor', 'contextSnapshot', 'contextNoSnapshot', 'whole'].map(
        (op) => [op, all.get(`${size}:${op}`)],
      ),
    ),
  }));
}
