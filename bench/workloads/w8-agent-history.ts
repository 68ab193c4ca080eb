// W8 for agent-history: one useChat exchange through the chat route, driven as the Next.js example drives it
// (examples/nextjs/lib/chat.ts): `createChatHandler` over a user-scoped store on a postgres-js pool logged in as the
// app login (forced RLS), chat ids that are the thread ids, threads created on the first message, the agent built
// per turn with the context manager's `prepareStep` (gpt-4o-mini's window, the offline summarizer). The request body
// is what the example's transport sends: the thread id, the trigger and the new message only.
import { randomUUID } from 'node:crypto';
import { ToolLoopAgent, isStepCount } from 'ai';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { createChatHandler } from '../../src/ai-sdk/chat-route/create-chat-handler.js';
import { getActiveTurn } from '../../src/ai-sdk/chat-turn/active-turns.js';
import { createContextManager } from '../../src/ai-sdk/context-manager/create-context-manager.js';
import { createOfflineSummarizer } from '../../src/ai-sdk/summarizers/offline-summarizer.js';
import { createAgentHistory } from '../../src/store/create-agent-history.js';
import type { AgentHistoryDatabase } from '../../src/tenant/database.js';
import { storedTokenCountId } from '../../src/tokens/count-stored-message-tokens.js';
import { loadO200kTokenCounter } from '../../src/tokens/token-counter.js';
import { W8_INSTRUCTIONS, W8_STEPS, W8_TOOLS, w8Model, w8UserMessage } from './w8-chat-model.js';
import { postgresJsDebug, type StatementCounter } from './w8-statements.js';
import type { W8Peer } from './w8-peer.js';

const TEMPLATE_COUNT = 256;

/** The example's chat route on a fresh tenant; `seed` gives it threads of `size` messages from bench_template. */
export function agentHistoryW8({
  appUrl,
  admin,
  poolSize,
  counter,
}: {
  appUrl: string;
  admin: postgres.Sql;
  poolSize: number;
  counter: StatementCounter;
}): W8Peer {
  const client = postgres(appUrl, { max: poolSize, onnotice: () => {}, debug: postgresJsDebug(counter) });
  const history = createAgentHistory({ db: drizzle({ client }) as unknown as AgentHistoryDatabase });
  const tenantId = randomUUID();
  const userId = 'w8-user';
  const store = history.forTenant(tenantId, { userId });
  // The store as the route gets it: each call is named in the trace, and the statements of the streaming
  // checkpoints are told apart.
  const routeStore = traceStoreCalls(store, counter);
  // Each turn's model, by run id, to check what it was sent.
  const models = new Map<string, ReturnType<typeof w8Model>>();
  const modelOf = (runId: string) => {
    const model = w8Model(runId);
    models.set(runId, model);
    return model;
  };
  const summarizer = createOfflineSummarizer();
  const handler = createChatHandler({
    getHistory: () => routeStore,
    getUserId: () => userId,
    createThreads: 'on-first-message',
    tools: W8_TOOLS,
    model: {
      agent: ({ runId, prepareStep }) =>
        new ToolLoopAgent({
          model: modelOf(runId),
          instructions: W8_INSTRUCTIONS,
          tools: W8_TOOLS,
          prepareStep,
          maxOutputTokens: 500,
          stopWhen: isStepCount(5),
        }),
    },
    contextManager: ({ history: tenant, threadId }) =>
      createContextManager({
        store: tenant.contextStore(threadId),
        model: 'gpt-4o-mini',
        tools: W8_TOOLS,
        instructions: W8_INSTRUCTIONS,
        summarizer,
        maxOutputTokens: 500,
      }),
    run: { provider: 'mock', model: 'mock-v4' },
    // Diagnosis: `BENCH_W8_HISTORY_LIMIT` lowers how many of the newest rows the route reads for its checks.
    historyLimit: process.env.BENCH_W8_HISTORY_LIMIT ? Number(process.env.BENCH_W8_HISTORY_LIMIT) : undefined,
  });
  return {
    name: 'agent-history',
    async seed(size) {
      const thread = await store.createThread({ title: `w8-${size}` });
      const counterId = storedTokenCountId(await loadO200kTokenCounter());
      // Sequence q carries template (size - q + 1) mod 256: the newest message is an assistant answer.
      await admin.unsafe(
        `insert into agent_message (tenant_id, thread_id, user_id, sequence, message_id, role, status, parts, metadata,
           byte_size, token_count, token_counter_id, created_at, updated_at, completed_at)
         select $1::uuid, $2::uuid, $5::text, q, 'seed-' || q, t.role, 'completed', t.parts, '{}'::jsonb, t.byte_size, t.token_count,
           $4::text, now() - make_interval(secs => $3::int - q), now() - make_interval(secs => $3::int - q),
           now() - make_interval(secs => $3::int - q)
         from generate_series(1, $3::int) q join bench_template t on t.idx = ($3::int - q + 1) % ${TEMPLATE_COUNT}`,
        [tenantId, thread.id, size, counterId, userId],
      );
      await admin.unsafe(
        `update agent_thread set next_sequence = $2::bigint, last_message_at = now() where id = $1::uuid`,
        [thread.id, size],
      );
      return thread.id;
    },
    async turn(threadId) {
      const body = { threadId, trigger: 'submit-message', message: w8UserMessage(randomUUID()) };
      const request = new Request('http://localhost/api/chat', { method: 'POST', body: JSON.stringify(body) });
      const response = await handler.POST(request);
      if (response.status !== 200) throw new Error(`chat route answered ${response.status}: ${await response.text()}`);
      const done = getActiveTurn(tenantId, threadId)?.done;
      await response.text();
      const stored = await done;
      const steps = stored?.message.parts.filter((part) => part.type === 'step-start').length;
      if (stored?.status !== 'completed' || steps !== W8_STEPS)
        throw new Error(`the answer was stored ${stored?.status} with ${steps} steps`);
      // The model was sent the chat's history (its summary on a long chat), not the new message alone.
      const runId = response.headers.get('x-agent-history-run-id')!;
      const sent = models.get(runId)?.doStreamCalls[0]?.prompt.length ?? 0;
      models.delete(runId);
      if (sent < 10) throw new Error(`the model was sent ${sent} messages`);
    },
    close: () => client.end({ timeout: 5 }),
  };
}

/** `store` with every method call noted in the counter's trace, and `checkpointMessage` counted apart. */
function traceStoreCalls<STORE extends object>(store: STORE, counter: StatementCounter): STORE {
  const methods = store as unknown as Record<string, unknown>;
  const traced: Record<string, unknown> = { ...methods };
  for (const [name, value] of Object.entries(methods)) {
    if (typeof value !== 'function') continue;
    const checkpoint = name === 'checkpointMessage';
    traced[name] = (...args: unknown[]) => {
      counter.trace?.push(`store.${name}()`);
      if (!checkpoint) return value(...args);
      counter.checkpointsOpen++;
      return Promise.resolve(value(...args)).finally(() => counter.checkpointsOpen--);
    };
  }
  return traced as STORE;
}
