// `npm run bench:prompt-cache`: how much of each request a provider's prompt cache can serve, per context strategy.
// Two sessions, each on several budgets: a long tool loop (one user message, then PROMPT_CACHE_STEPS steps) and a
// chat with tools (PROMPT_CACHE_TURNS turns stored between requests, growing past the budget several times). Every
// request is counted by bench/prompt-cache/cache-tally.ts in OpenAI's cache blocks and with Anthropic's explicit
// breakpoints. Strategies: the context engine with its default policy and with one lever changed at a time (see
// `levers` below), the AI SDK's `pruneMessages` then a newest-first trim, a newest-first trim alone, and no
// management. Prints one markdown table row per session, budget and strategy: tokens sent, the share cacheable in
// each model, the estimated cost at a cached price of 10 % (in uncached tokens, OpenAI's model), calls over the
// budget and compactions (calls that did not append to the whole previous request); then, per session and budget,
// an upper bound on the OpenAI share for any strategy within the budget (see `upperBound`). PROMPT_CACHE_JSON=1
// prints JSON instead. PROMPT_CACHE_BUDGETS (6000,16000,40000,113000), PROMPT_CACHE_SESSIONS (loop,chat).
import { convertToModelMessages, type ModelMessage } from 'ai';
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import { baselines, engineStrategy, type Strategy } from './prompt-cache/strategies.js';
import { chatSession, toolLoopSession, type Session } from './prompt-cache/sessions.js';
import { tokensOf, type Tally } from './prompt-cache/cache-tally.js';
import { round } from './stats.js';

const steps = Number(process.env.PROMPT_CACHE_STEPS ?? 200);
const turns = Number(process.env.PROMPT_CACHE_TURNS ?? 60);
const budgets = (process.env.PROMPT_CACHE_BUDGETS ?? '6000,16000,40000,113000').split(',').map(Number);
const sessionKinds = (process.env.PROMPT_CACHE_SESSIONS ?? 'loop,chat').split(',');
const cachedPrice = 0.1;
const previewTokens = 1000;

/**
 * The engine's levers, one at a time against the defaults (fixed-size previews, compaction down to 60 % of the
 * budget, old reasoning kept until the context is over the budget).
 */
const levers: Record<string, Strategy> = {
  'context engine (defaults)': engineStrategy(),
  'engine, each request from the whole thread': engineStrategy({ summary: { startFrom: 'thread' } }),
  'engine, previews fit and grow back': engineStrategy({ toolOutputPreview: { sizing: 'fit' } }),
  'engine, low-water 100 % (cut to the budget)': engineStrategy({ summary: { targetRatio: 1 } }),
  'engine, everything cut to the budget (the previous defaults)': engineStrategy({
    prune: { reasoning: 'outside-newest-turns' },
    summary: { targetRatio: 1, startFrom: 'thread' },
    toolOutputPreview: { sizing: 'fit' },
  }),
  'engine, old reasoning pruned at every turn': engineStrategy({ prune: { reasoning: 'outside-newest-turns' } }),
  "engine, older turns' tool traffic always pruned": engineStrategy({ prune: { toolTraffic: 'outside-newest-turns' } }),
  'engine, low-water 50 %': engineStrategy({ summary: { targetRatio: 0.5 } }),
  'engine, low-water 70 %': engineStrategy({ summary: { targetRatio: 0.7 } }),
  'engine, low-water 85 %': engineStrategy({ summary: { targetRatio: 0.85 } }),
};

/**
 * An upper bound on the OpenAI share cacheable by any strategy that stays within the budget: a request's new
 * messages (the step's, or at a new turn the user message and the previous answer's closing text) were in no
 * earlier request, so at best everything else is cached, and no request holds more than the budget. Each new tool
 * output is counted at most at the preview size (a strategy may send a preview instead). Compactions are ignored.
 */
async function upperBound(session: Session, budget: number): Promise<number> {
  let fresh = 0;
  let calls = 0;
  const capped = (messages: ModelMessage[]) =>
    messages.map((message) =>
      message.role !== 'tool'
        ? message
        : {
            ...message,
            content: message.content.map((part) =>
              part.type === 'tool-result' && part.output.type === 'text'
                ? { ...part, output: { type: 'text' as const, value: part.output.value.slice(0, previewTokens * 4) } }
                : part,
            ),
          },
    );
  for (const [index, turn] of session.turns.entries()) {
    const answer = session.turns[index - 1]?.answer;
    const closing = answer ? (await convertToModelMessages([answer])).slice(-1) : [];
    fresh += Math.min(budget, tokensOf([...closing, ...(await convertToModelMessages([turn.user]))]));
    calls += 1 + turn.steps.length;
    for (const step of turn.steps) fresh += Math.min(budget, tokensOf(capped(step)));
  }
  return Math.max(0, 1 - fresh / (calls * budget));
}

const tokenCounter = await loadO200kTokenCounter();
const strategies: Record<string, Strategy> = { ...levers, ...baselines };
const rows = [];
const bounds = [];
for (const kind of sessionKinds)
  for (const budget of budgets) {
    const session = kind === 'loop' ? toolLoopSession(budget, steps) : await chatSession(budget, turns);
    bounds.push({
      session: session.name,
      budget,
      openAIPercentAtMost: round((await upperBound(session, budget)) * 100, 1),
    });
    for (const [strategy, run] of Object.entries(strategies))
      rows.push(summarize(session, budget, strategy, await run(session, budget, tokenCounter)));
  }

function summarize(session: Session, budget: number, strategy: string, tally: Tally) {
  const cost = tally.sent - tally.cacheableOpenAI + tally.cacheableOpenAI * cachedPrice;
  return {
    session: session.name,
    budget,
    strategy,
    calls: tally.calls,
    tokensSent: tally.sent,
    cacheableOpenAIPercent: round((tally.cacheableOpenAI / tally.sent) * 100, 1),
    cacheableAnthropicPercent: round((tally.cacheableAnthropic / tally.sent) * 100, 1),
    // In uncached input tokens, with OpenAI's cacheable tokens at 10 % of the price.
    estimatedCostTokens: Math.round(cost),
    overBudgetCalls: tally.overBudget,
    compactions: tally.compactions,
  };
}

if (process.env.PROMPT_CACHE_JSON === '1') console.log(JSON.stringify({ rows, bounds }, null, 2));
else {
  const number = (value: number) => value.toLocaleString('en-US');
  console.log(
    '| session | budget | strategy | tokens sent | cacheable (OpenAI) | cacheable (Anthropic) | cost (uncached tokens) | calls over budget | compactions |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows)
    console.log(
      `| ${row.session} | ${number(row.budget)} | ${row.strategy} | ${number(row.tokensSent)} | ${row.cacheableOpenAIPercent} % | ${row.cacheableAnthropicPercent} % | ${number(row.estimatedCostTokens)} | ${row.overBudgetCalls} | ${row.compactions} |`,
    );
  console.log(
    '\n| session | budget | cacheable (OpenAI) at most, any strategy within the budget |\n| --- | --- | --- |',
  );
  for (const bound of bounds)
    console.log(`| ${bound.session} | ${number(bound.budget)} | ${bound.openAIPercentAtMost} % |`);
}
