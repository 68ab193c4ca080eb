// Checks that the scale note's generated rows are rows the store itself would have written, before anything is
// measured on them: gapless sequences per thread equal to the thread's `next_sequence`, the search vector the
// trigger computes, and, through the store as the application login, a newest page, a context load with exact
// token counts under the store's counter id, and a real append that continues the sequence and stores the same
// byte size, token count and vector as the generated copy of the same template. Throws on any difference.
import type postgres from 'postgres';
import { countStoredMessageTokens, storedTokenCountId } from '../src/tokens/count-stored-message-tokens.js';
import type { TokenCounter } from '../src/tokens/token-counter.js';
import type { MessageFactory } from './messages.js';
import type { openAgentHistory } from './peers/agent-history-peer.js';

type Sql = postgres.Sql;
type History = ReturnType<typeof openAgentHistory>['history'];
type Thread = { tenant_id: string; id: string };

function expect(condition: boolean, what: string, detail?: unknown) {
  if (!condition)
    throw new Error(`scale data check failed: ${what} ${detail === undefined ? '' : JSON.stringify(detail)}`);
}

/** Every scale thread: messages 1..next_sequence, no gap (count = max, min = 1; the unique index forbids duplicates). */
async function checkSequences(sql: Sql) {
  const [row] = await sql<{ threads: number; bad: number; messages: string }[]>`
    select count(*)::int as threads, sum(m.n)::text as messages,
      count(*) filter (where m.n is distinct from th.next_sequence or m.lo <> 1 or m.hi <> th.next_sequence
        or th.last_message_at < m.newest)::int as bad
    from agent_thread th left join (select tenant_id, thread_id, count(*) as n, min(sequence) as lo,
      max(sequence) as hi, max(created_at) as newest from agent_message group by 1, 2) m
      on m.tenant_id = th.tenant_id and m.thread_id = th.id
    where th.title = 'scale'`;
  expect(row!.bad === 0, 'threads whose sequences are not 1..next_sequence', row);
  return Number(row!.messages);
}

/** The vector the trigger computes for each template equals the one copied into the generated rows. */
async function checkVectors(sql: Sql, thread: Thread) {
  const rollback = new Error('rollback');
  let row: { differing: number } | undefined;
  await sql
    .begin(async (tx) => {
      [row] = await tx<{ differing: number }[]>`
        with inserted as (
          insert into agent_message (tenant_id, thread_id, sequence, message_id, role, parts)
          select ${thread.tenant_id}, ${thread.id}, 1000000000 + idx, 'vector-check-' || idx, role, parts
          from bench_template returning sequence - 1000000000 as idx, search_vector)
        select count(*)::int as differing from inserted i join bench_template t using (idx)
        where i.search_vector is distinct from t.search_vector`;
      throw rollback;
    })
    .catch((error: unknown) => {
      if (error !== rollback) throw error;
    });
  expect(row!.differing === 0, 'templates whose trigger vector differs from the generated one', row);
}

async function checkThroughStore(
  sql: Sql,
  history: History,
  thread: Thread,
  tokenCounter: TokenCounter,
  factory: MessageFactory,
) {
  // The store's own id for its counter, not the one the generator was given: a wrong generator id must fail here.
  const counterId = storedTokenCountId(tokenCounter);
  const store = history.forTenant(thread.tenant_id);
  const [{ next }] = await sql<{ next: number }[]>`select next_sequence::int as next from agent_thread
    where tenant_id = ${thread.tenant_id} and id = ${thread.id}`;
  const page = await store.listMessages(thread.id);
  const sequences = page.messages.map((message) => message.sequence);
  const newest = Array.from({ length: Math.min(50, next) }, (_, index) => next - index);
  expect(JSON.stringify(sequences) === JSON.stringify(newest), 'newest page', { sequences, next });
  const context = await store.loadContext(thread.id);
  expect(context.tail.length === next, 'context tail length', { tail: context.tail.length, next });
  for (const message of context.tail.filter((stored) => stored.message.id.startsWith('scale-'))) {
    const counted = Math.ceil(
      countStoredMessageTokens({
        message: message.message as never,
        tokenCounter,
      }),
    );
    expect(message.tokenCount === counted && message.tokenCounterId === counterId, 'token count', {
      sequence: message.sequence,
      stored: [message.tokenCount, message.tokenCounterId],
      counted: [counted, counterId],
    });
  }
  const idx = next % factory.templates.length;
  const template = factory.templates[idx]!;
  const { stored } = await store.appendMessage(thread.id, { id: `check-${thread.id}-${next}`, ...template });
  expect(stored.sequence === next + 1, 'appended sequence', { sequence: stored.sequence, next });
  const [same] = await sql<{ same: boolean }[]>`select m.byte_size = t.byte_size and m.token_count = t.token_count
      and m.token_counter_id = ${counterId} and m.search_vector = t.search_vector and m.parts = t.parts as same
    from agent_message m, bench_template t
    where m.tenant_id = ${thread.tenant_id} and m.thread_id = ${thread.id} and m.sequence = ${next + 1}
      and t.idx = ${idx}`;
  expect(same?.same === true, 'a store append of a template stores what the generator copied', { idx });
}

/** All the checks above, on `sample` random scale threads; returns the number of messages counted. */
export async function checkScaleData(
  sql: Sql,
  history: History,
  {
    threads,
    tokenCounter,
    factory,
    sample = 3,
  }: {
    threads: Thread[];
    tokenCounter: TokenCounter;
    factory: MessageFactory;
    sample?: number;
  },
): Promise<number> {
  const messages = await checkSequences(sql);
  await checkVectors(sql, threads[0]!);
  for (let index = 0; index < sample; index++)
    await checkThroughStore(sql, history, threads[(index * 7919) % threads.length]!, tokenCounter, factory);
  return messages;
}
