// `npm run bench:prompt-cache`: how much of each request a provider's prompt cache can serve, per context strategy.
// A long tool loop (one user message, then PROMPT_CACHE_STEPS model steps, each a tool call and its result) is
// replayed call by call on several budgets; for every request the input tokens that are a prefix of the previous
// request are counted in OpenAI's cache blocks (nothing below 1,024 tokens, then 128-token increments), by the
// independent count of test/support/count-sent-tokens.ts, whole messages only. Strategies: the context engine's
// `prepareStep` (default policy), the AI SDK's `pruneMessages` then a newest-first trim to the budget, a
// newest-first trim alone, and no management. Prints a JSON summary per budget and strategy: tokens sent, tokens
// cacheable, the estimated cost at a cached price of 10 % (in uncached tokens, and as a share of sending every token
// uncached), calls over the budget and the engine's compactions (steps whose messages it changed).
// PROMPT_CACHE_STEPS (default 200) and PROMPT_CACHE_BUDGETS (default 6000,16000,40000,113000) set the session.
import { pruneMessages, type ModelMessage } from 'ai';
import { createContextEngine } from '../src/context/index.js';
import { createMemoryContextStore } from '../src/testing/index.js';
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import { createRandom } from '../test/support/agent-conversations.js';
import { fixedTokens, instructions, profile, toolDefinitions } from '../test/support/check-generated-context.js';
import { countSentTokens } from '../test/support/count-sent-tokens.js';
import { round } from './stats.js';

const steps = Number(process.env.PROMPT_CACHE_STEPS ?? 200);
const budgets = (process.env.PROMPT_CACHE_BUDGETS ?? '6000,16000,40000,113000').split(',').map(Number);
const cachedPrice = 0.1;

/** Tokens a provider caches of a shared prefix: OpenAI's blocks. */
function cacheBlocks(prefixTokens: number): number {
  return prefixTokens < 1024 ? 0 : 1024 + Math.floor((prefixTokens - 1024) / 128) * 128;
}

/** The model steps of the loop: an assistant message with one call, and the tool message with its result. */
function loopSteps(seed: number): ModelMessage[][] {
  const random = createRandom(seed);
  const line = 'row id=%d status=ok note=lorem ipsum dolor sit amet consectetur adipiscing elit';
  return Array.from({ length: steps }, (_step, index) => {
    const toolCallId = `call-${index}`;
    const lines = random.chance(0.05) ? random.int(400, 1200) : random.int(2, 60);
    const output = Array.from({ length: lines }, (_row, row) => line.replace('%d', String(row))).join('\n');
    return [
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId, toolName: 'search', input: { query: `step ${index}` } }],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId, toolName: 'search', output: { type: 'text', value: output } }],
      },
    ] as ModelMessage[];
  });
}

const tokensOf = (messages: readonly ModelMessage[]) => countSentTokens(messages as never, profile) + fixedTokens;
// What the provider sees of a message (the engine's reference is never sent).
const sentForm = ({ role, content, providerOptions }: ModelMessage) =>
  JSON.stringify({ role, content, providerOptions });

/** Drops the oldest step pairs after the user message until the messages fit. */
function trimNewestFirst(messages: readonly ModelMessage[], budget: number): ModelMessage[] {
  let kept = [...messages];
  while (tokensOf(kept) > budget && kept.length > 3) kept = [kept[0]!, ...kept.slice(3)];
  return kept;
}

interface Tally {
  calls: number;
  sent: number;
  cacheable: number;
  overBudget: number;
  compactions: number;
}

function record(
  tally: Tally,
  previous: readonly ModelMessage[] | undefined,
  sent: readonly ModelMessage[],
  budget: number,
) {
  const total = tokensOf(sent);
  let shared = 0;
  if (previous) {
    const before = previous.map(sentForm);
    while (shared < sent.length && shared < before.length && sentForm(sent[shared]!) === before[shared]) shared += 1;
  }
  tally.calls += 1;
  tally.sent += total;
  tally.cacheable += previous ? cacheBlocks(Math.min(total, tokensOf(sent.slice(0, shared)))) : 0;
  if (total > budget) tally.overBudget += 1;
}

type Strategy = (budget: number, loop: ModelMessage[][]) => Promise<Tally>;

const user: ModelMessage = { role: 'user', content: [{ type: 'text', text: 'Go through every page of the report.' }] };

const managed =
  (manage: (messages: ModelMessage[], budget: number) => ModelMessage[]): Strategy =>
  async (budget, loop) => {
    const tally: Tally = { calls: 0, sent: 0, cacheable: 0, overBudget: 0, compactions: 0 };
    let history: ModelMessage[] = [user];
    let previous: ModelMessage[] | undefined;
    for (let step = 0; step <= loop.length; step++) {
      const sent = manage(history, budget);
      record(tally, previous, sent, budget);
      previous = sent;
      history = [...history, ...(loop[step] ?? [])];
    }
    return tally;
  };

const strategies: Record<string, Strategy> = {
  async engine(budget, loop) {
    const tokenCounter = await loadO200kTokenCounter();
    const store = createMemoryContextStore();
    await store.appendMessage({
      message: { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Go through every page of the report.' }] },
    });
    const engine = createContextEngine({
      store,
      profile,
      tokenCounter,
      instructions,
      toolDefinitions,
      maxInputTokens: budget,
    });
    const tally: Tally = { calls: 0, sent: 0, cacheable: 0, overBudget: 0, compactions: 0 };
    let messages = (await engine.buildInitialContext()).messages;
    record(tally, undefined, messages, budget);
    let previous = messages;
    for (const [index, step] of loop.entries()) {
      const prepared = await engine.prepareStep({ messages: [...messages, ...step], stepNumber: index + 1 });
      if (prepared.messages) tally.compactions += 1;
      messages = prepared.messages ?? [...messages, ...step];
      record(tally, previous, messages, budget);
      previous = messages;
    }
    return tally;
  },
  'pruneMessages + trim': managed((messages, budget) =>
    trimNewestFirst(
      pruneMessages({ messages, reasoning: 'before-last-message', toolCalls: 'before-last-2-messages' }),
      budget,
    ),
  ),
  'newest-first trim': managed(trimNewestFirst),
  'no management': managed((messages) => messages),
};

const results = [];
for (const budget of budgets) {
  const loop = loopSteps(budget);
  for (const [name, strategy] of Object.entries(strategies)) {
    const tally = await strategy(budget, loop);
    results.push({
      session: `tool loop, ${steps} steps`,
      budget,
      strategy: name,
      calls: tally.calls,
      tokensSent: tally.sent,
      cacheablePercent: round((tally.cacheable / tally.sent) * 100, 1),
      // In uncached input tokens: what the session's input costs, and that as a share of sending it all uncached.
      estimatedCostTokens: Math.round(tally.sent - tally.cacheable + tally.cacheable * cachedPrice),
      estimatedCostShare: round((tally.sent - tally.cacheable + tally.cacheable * cachedPrice) / tally.sent, 3),
      overBudgetCalls: tally.overBudget,
      compactions: tally.compactions,
    });
  }
}
console.log(JSON.stringify(results, null, 2));
