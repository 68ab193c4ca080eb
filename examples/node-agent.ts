// A plain Node ToolLoopAgent on agent-history, without a web framework: each turn stores the user message,
// starts a run, begins the assistant message, builds the context with the context manager (budget, pruning,
// summary, snapshot), streams the agent, and persists the answer per step (completed, or cancelled on abort).
//
//   npx tsx examples/node-agent.ts            # offline: PGlite in memory and a scripted model
//   DATABASE_URL=postgres://… npx tsx examples/node-agent.ts
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { ToolLoopAgent, isStepCount, simulateReadableStream, tool, type UIMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { z } from 'zod';
import { createAgentHistory, migrate, type AgentHistoryDatabase } from 'agent-history';
import { createContextManager, createOfflineSummarizer, persistUIMessageStream } from 'agent-history/ai-sdk';

const tools = {
  weather: tool({
    description: 'The current temperature in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, tempC: 10 + (city.length % 15) }),
  }),
};
const instructions = 'You are a terse travel assistant. Use the weather tool for weather questions.';

/** A scripted model: a weather question calls the tool, then the answer quotes its result. */
function scriptedModel() {
  const usage = (input: number, output: number) => ({
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  });
  const text = (value: string) => [
    { type: 'text-start', id: 't' },
    ...value.split(/(?<= )/).map((delta) => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usage(200, value.split(' ').length) },
  ];
  return new MockLanguageModelV4({
    provider: 'scripted',
    modelId: 'scripted-v1',
    doStream: async ({ prompt }) => {
      const last = prompt.at(-1)!;
      const question = JSON.stringify(last.content);
      const city = /weather in ([A-Za-z ]+)/i.exec(question)?.[1]?.trim();
      const chunks: unknown[] =
        last.role === 'tool'
          ? text(`It is ${/"tempC":(\d+)/.exec(question)?.[1]}°C there.`)
          : city
            ? [
                { type: 'tool-call', toolCallId: randomUUID(), toolName: 'weather', input: JSON.stringify({ city }) },
                { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(180, 10) },
              ]
            : text('Noted: I will keep that in mind for the trip.');
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs: 5 }) as never };
    },
  });
}

async function openDatabase() {
  if (process.env.DATABASE_URL) {
    const client = postgres(process.env.DATABASE_URL, { max: 4, onnotice: () => {} });
    return { db: drizzlePostgres({ client }) as unknown as AgentHistoryDatabase, close: () => client.end() };
  }
  const client = await PGlite.create();
  return { db: drizzlePglite({ client }) as unknown as AgentHistoryDatabase, close: () => client.close() };
}

const { db, close } = await openDatabase();
try {
  await migrate(db);
  const store = createAgentHistory({ db }).forTenant(randomUUID());
  const thread = await store.createThread({ userId: 'traveller', title: 'Trip planning' });
  const model = scriptedModel();

  for (const question of [
    'I am planning a trip to Norway in May.',
    'What is the weather in Oslo?',
    'And the weather in Bergen?',
  ]) {
    console.log(`\nuser      › ${question}`);
    const userMessage: UIMessage = { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: question }] };
    await store.appendMessage(thread.id, userMessage);
    const run = await store.startRun(thread.id, { provider: model.provider, model: model.modelId });
    const answer = await store.beginAssistantMessage(thread.id, { messageId: randomUUID(), runId: run.id });

    // The context manager reads the thread from the store and fits every step into the model's budget.
    const reports: string[] = [];
    const context = createContextManager({
      store: store.contextStore(thread.id),
      model: 'gpt-4o-mini',
      tools,
      instructions,
      maxOutputTokens: 500,
      summarizer: createOfflineSummarizer(),
      onReport: (report) =>
        reports.push(
          `  context  · ${report.trigger}${report.stepNumber === null ? '' : ` #${report.stepNumber}`}: ${report.messageCount} messages, ` +
            `~${report.estimatedTokens} of ${report.budget.contextWindow} tokens`,
        ),
    });
    const agent = new ToolLoopAgent({
      model,
      tools,
      instructions,
      prepareStep: context.prepareStep,
      maxOutputTokens: 500,
      stopWhen: isStepCount(4),
    });
    const abortController = new AbortController();
    const result = await agent.stream({
      messages: await context.initialMessages(),
      abortSignal: abortController.signal,
    });

    const persisted = persistUIMessageStream({
      history: store,
      threadId: thread.id,
      runId: run.id,
      messageId: answer.stored.message.id,
      stream: result.stream,
      tools,
      originalMessages: [userMessage],
      abortController,
    });
    process.stdout.write('assistant › ');
    for await (const chunk of persisted.stream as unknown as AsyncIterable<{
      type: string;
      delta?: string;
      toolName?: string;
    }>) {
      if (chunk.type === 'text-delta') process.stdout.write(chunk.delta ?? '');
      if (chunk.type === 'tool-input-available') process.stdout.write(`[${chunk.toolName}] `);
    }
    const stored = await persisted.done;
    const finishedRun = await store.getRun(run.id);
    console.log(`\n${reports.join('\n')}`);
    console.log(
      `  stored   · #${stored.sequence} ${stored.status}, ${stored.tokenCount} tokens; run ${finishedRun.status}, ${finishedRun.inputTokens} in / ${finishedRun.outputTokens} out`,
    );
  }

  const page = await store.listMessages(thread.id, { limit: 10 });
  console.log(`\nThe thread, oldest first (${page.messages.length} messages):`);
  for (const row of [...page.messages].reverse()) {
    const text = row.message.parts
      .map((part) =>
        part.type === 'text' ? String(part.text) : part.type.startsWith('tool-') ? `[${part.type.slice(5)}]` : '',
      )
      .join(' ');
    console.log(`  #${row.sequence} ${row.message.role.padEnd(9)} ${row.status.padEnd(9)} ${text.trim()}`);
  }
} finally {
  await close();
}
