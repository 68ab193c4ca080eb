// `npm run demo`: the main job, offline, on embedded PGlite.
//
// A ToolLoopAgent with two tools answers a conversation long enough to need compaction. Every turn goes through
// agent-history: the user message is stored idempotently, the answer is streamed, checkpointed per step and
// finalized, and the context engine fits each model call into a deliberately small budget (pruning old tool
// traffic, writing a summary, recording a snapshot). Then a page of history and a search.
//
// With OPENAI_API_KEY set, the same run uses gpt-4o-mini instead of the local rule-based model.
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { ToolLoopAgent, isStepCount, tool, type LanguageModel, type UIMessage } from 'ai';
import { drizzle } from 'drizzle-orm/pglite';
import { z } from 'zod';
import { createAgentHistory, migrate } from 'agent-history';
import {
  createContextManager,
  createOfflineSummarizer,
  streamChatTurn,
  type ContextReport,
} from 'agent-history/ai-sdk';
import { createDemoModel } from './demo-model.js';

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
const log = (line: string) => console.log(line);

const tools = {
  weather: tool({
    description: 'The current weather in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({
      city,
      temperatureC: 12 + (city.length % 9),
      sky: city.length % 2 ? 'clear' : 'cloudy',
    }),
  }),
  lookupOrder: tool({
    description: 'Looks up an order with its line items and shipping history.',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({
      orderId,
      status: 'shipped',
      items: Array.from({ length: 40 }, (_, index) => ({
        sku: `SKU-${1000 + index}`,
        name: `Travel item ${index}`,
        quantity: 1 + (index % 3),
        priceEur: 9.5 + index,
      })),
      history: Array.from(
        { length: 20 },
        (_, index) => `2026-11-${String(index + 1).padStart(2, '0')}: parcel scanned at hub ${index}`,
      ),
    }),
  }),
};

const conversation = [
  'Hi! I am planning a week in Europe in December.',
  'What is the weather in Paris?',
  'And the weather in Vienna?',
  'Can you check order A-1001? It has my travel gear.',
  'How should I split the week between the two cities?',
  'What is the weather in Prague?',
  'Should I add Prague to the trip?',
  'Summarize the plan for me, please.',
];

async function main() {
  log(
    `agent-history demo: PGlite (embedded PostgreSQL), offline model${process.env.OPENAI_API_KEY ? ' replaced by gpt-4o-mini (OPENAI_API_KEY)' : ''}`,
  );
  log(`[${elapsed()}] starting embedded PostgreSQL (PGlite) and applying the migrations…`);
  const client = await PGlite.create();
  const db = drizzle({ client });
  await migrate(db);
  log(`[${elapsed()}] migrated`);

  const history = createAgentHistory({ db });
  const store = history.forTenant(randomUUID());
  const thread = await store.createThread({ userId: 'demo-user', title: 'December trip' });

  const model: LanguageModel = process.env.OPENAI_API_KEY
    ? (await import('@ai-sdk/openai')).openai('gpt-4o-mini')
    : createDemoModel();
  const instructions = 'You are a concise travel assistant. Use the tools when they help.';
  const reports: ContextReport[] = [];

  for (const [index, text] of conversation.entries()) {
    log(`\n[${elapsed()}] turn ${index + 1}: user › ${text}`);
    const turn = await streamChatTurn<UIMessage, typeof tools>({
      history: store,
      threadId: thread.id,
      message: { id: `user-${index + 1}`, role: 'user', parts: [{ type: 'text', text }] },
      requestId: `request-${index + 1}`,
      tools,
      run: { provider: 'demo', model: 'rule-based' },
      contextManager: ({ history: tenantStore, threadId }) =>
        createContextManager({
          store: tenantStore.contextStore(threadId),
          // A deliberately small window, so a short conversation shows pruning, a summary and a snapshot.
          model: 'gpt-4o-mini',
          modelProfile: { contextWindow: 1_500, maxOutputTokens: 400 },
          maxOutputTokens: 400,
          tools,
          instructions,
          summarizer: createOfflineSummarizer(),
          policy: { summary: { reserveTokens: 300 } },
          onReport: (report) => reports.push(report),
        }),
      model: {
        agent: ({ prepareStep }) =>
          new ToolLoopAgent({
            model,
            instructions,
            tools,
            prepareStep,
            maxOutputTokens: 400,
            stopWhen: isStepCount(4),
          }),
      },
    });
    // Read the stream as a browser would; the answer is stored whatever the reader does.
    const reader = turn.stream.getReader();
    while (!(await reader.read()).done);
    const answer = await turn.done;
    const answerText = answer.message.parts
      .filter((part) => part.type === 'text')
      .map((part) => String(part.text))
      .join('');
    const toolCalls = answer.message.parts
      .filter((part) => part.type.startsWith('tool-'))
      .map((part) => part.type.slice(5));
    log(
      `  assistant › ${answerText.slice(0, 140)}${answerText.length > 140 ? '…' : ''}${toolCalls.length ? `  (tools: ${toolCalls.join(', ')})` : ''}`,
    );
    log(`  stored as #${answer.sequence} (${answer.status}, ${answer.tokenCount} tokens)`);
    for (const report of reports.splice(0)) printReport(report);
  }

  log(`\n[${elapsed()}] newest page of history (limit 6, then the next page by cursor):`);
  const page = await store.listMessages(thread.id, { limit: 6 });
  for (const stored of page.messages)
    log(
      `  #${stored.sequence} ${stored.message.role.padEnd(9)} ${stored.status.padEnd(9)} ${preview(stored.message.parts)}`,
    );
  const older = await store.listMessages(thread.id, { limit: 6, before: page.nextCursor ?? undefined });
  log(`  … next page starts at #${older.messages[0]?.sequence}, ${older.messages.length} messages`);

  log(`\n[${elapsed()}] search "weather vienna":`);
  for (const hit of await store.searchMessages('weather vienna'))
    log(`  #${hit.sequence} ${hit.role}: ${unescapeHtml(hit.snippet)}`);

  const summaries = await store.listSummaries(thread.id);
  const context = await store.loadContext(thread.id);
  log(
    `\n[${elapsed()}] ${summaries.length} summary artifact(s); newest covers messages ${summaries.at(-1)?.fromSequence ?? '-'}..${summaries.at(-1)?.throughSequence ?? '-'}`,
  );
  log(
    `  snapshot v${context.snapshot?.version ?? 0} through #${context.snapshot?.throughSequence ?? 0}, tail of ${context.tail.length} message(s), hash ${context.snapshot?.messagesHash.slice(0, 12) ?? '-'}`,
  );
  log(`\n[${elapsed()}] done`);
  await client.close();
}

function printReport(report: ContextReport) {
  const { budget } = report;
  const label = report.trigger === 'initial-messages' ? 'request' : `step ${report.stepNumber}`;
  log(
    `  context ${label}: window ${budget.contextWindow} = output ${budget.maxOutputTokens} + instructions ${budget.instructionsTokens}` +
      ` + tools ${budget.toolDefinitionsTokens} + input ${budget.currentInputTokens} + margin ${budget.safetyMarginTokens}` +
      ` + history ${budget.availableTokens} (used ${budget.historyTokens}); ${report.messageCount} messages, ${report.durationMs.toFixed(1)} ms`,
  );
  const actions = report.stages
    .map((stage) => {
      if (stage.stage === 'summarize' && stage.status !== 'not-needed')
        return `summary ${stage.status} (${stage.fromSequence}..${stage.throughSequence})`;
      if (stage.removed.length > 0)
        return `${stage.stage} removed ${stage.removed.length} (${stage.tokensSaved} tokens)`;
      return null;
    })
    .filter((action) => action !== null);
  if (actions.length > 0) log(`    stages: ${actions.join('; ')}`);
  if (report.snapshot.status === 'written')
    log(`    snapshot v${report.snapshot.version} written, boundary #${report.snapshot.throughSequence}`);
}

/** Search snippets are HTML (the user's text escaped, matches in <b>); print them as text. */
function unescapeHtml(html: string) {
  return html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function preview(parts: ReadonlyArray<{ type: string; [key: string]: unknown }>) {
  const text = parts
    .map((part) => (part.type === 'text' ? String(part.text) : part.type === 'step-start' ? '' : `[${part.type}]`))
    .join(' ')
    .trim();
  return text.length > 70 ? `${text.slice(0, 69)}…` : text;
}

await main();
