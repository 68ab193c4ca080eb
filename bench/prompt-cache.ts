// `npm run bench:prompt-cache`: how much of each request a provider's prompt cache can serve, per context strategy.
// Two sessions, each on several budgets: a long tool loop (one user message, then PROMPT_CACHE_STEPS steps) and a
// chat with tools (PROMPT_CACHE_TURNS turns stored between requests, growing past the budget several times). Every
// request is counted by bench/prompt-cache/cache-tally.ts in OpenAI's cache blocks and with Anthropic's explicit
// breakpoints. Strategies: the context engine with its default policy and with one lever changed at a time (see
// `levers` below), the AI SDK's `pruneMessages` then a newest-first trim, a newest-first trim alone, and no
// management. Prints one markdown table row per session, budget and strategy: tokens sent, the share cacheable in
// each model, the estimated cost at a cached price of 10 % (in uncached tokens, OpenAI's model), calls over the
// budget and compactions (calls that did not append to the whole previous request); then, per session and budget,
// what no strategy of the engine's cut rules can beat (see `bounds`; PROMPT_CACHE_BOUNDS=0 leaves them out).
// PROMPT_CACHE_JSON=1 prints JSON instead. PROMPT_CACHE_BUDGETS (6000,16000,40000,113000), PROMPT_CACHE_SESSIONS
// (loop,chat).
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import { baselines, engineStrategy, type Strategy } from './prompt-cache/strategies.js';
import { chatSession, toolLoopSession, type Session } from './prompt-cache/sessions.js';
import type { Tally } from './prompt-cache/cache-tally.js';
import { sessionLayout, unmanagedRequests, type PrunedForm } from './prompt-cache/bound-layout.js';
import { cutAwareBound, leastCostKeepingHistory } from './prompt-cache/cut-bound.js';
import { round } from './stats.js';

const steps = Number(process.env.PROMPT_CACHE_STEPS ?? 200);
const turns = Number(process.env.PROMPT_CACHE_TURNS ?? 60);
const budgets = (process.env.PROMPT_CACHE_BUDGETS ?? '6000,16000,40000,113000').split(',').map(Number);
const sessionKinds = (process.env.PROMPT_CACHE_SESSIONS ?? 'loop,chat').split(',');
const cachedPrice = 0.1;
const withBounds = process.env.PROMPT_CACHE_BOUNDS !== '0';

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

/** The pruned forms the bound tries; it reports the highest. */
const boundForms: PrunedForm[] = [{ previewTokens: 1000 }, { previewTokens: 64 }, 'tool traffic removed'];

/**
 * What no strategy of the engine's cut rules can beat (bench/prompt-cache/cut-bound.ts): the highest OpenAI share
 * cacheable, over each pruned form, and the least cost of any strategy that removes nothing until the budget needs it.
 */
async function bounds(session: Session, budget: number) {
  const requests = await unmanagedRequests(session);
  const shares = boundForms.map((form) => ({
    form: typeof form === 'string' ? form : `previews of ${form.previewTokens} tokens`,
    ...cutAwareBound(sessionLayout(requests, form, tokenCounter, budget), budget),
  }));
  const best = shares.reduce((high, share) => (share.share > high.share || Number.isNaN(high.share) ? share : high));
  const cost = leastCostKeepingHistory(
    sessionLayout(requests, boundForms[0]!, tokenCounter, budget),
    budget,
    cachedPrice,
  );
  return {
    session: session.name,
    budget,
    openAIPercentAtMost: round(best.share * 100, 1),
    perForm: Object.fromEntries(shares.map((share) => [share.form, round(share.share * 100, 1)])),
    bestForm: best.form,
    bestCuts: best.cuts,
    leastCostKeepingHistory: Math.round(cost),
  };
}

const tokenCounter = await loadO200kTokenCounter();
const strategies: Record<string, Strategy> = { ...levers, ...baselines };
const rows = [];
const boundRows: Awaited<ReturnType<typeof bounds>>[] = [];
for (const kind of sessionKinds)
  for (const budget of budgets) {
    const session = kind === 'loop' ? toolLoopSession(budget, steps) : await chatSession(budget, turns);
    if (withBounds) boundRows.push(await bounds(session, budget));
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

if (process.env.PROMPT_CACHE_JSON === '1') console.log(JSON.stringify({ rows, bounds: boundRows }, null, 2));
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
    '\n| session | budget | cacheable (OpenAI) at most, any strategy of the cut rules | per pruned form | cuts of the best | least cost keeping history |\n| --- | --- | --- | --- | --- | --- |',
  );
  for (const bound of boundRows)
    console.log(
      `| ${bound.session} | ${number(bound.budget)} | ${bound.openAIPercentAtMost} % (${bound.bestForm}) | ${Object.entries(
        bound.perForm,
      )
        .map(([form, share]) => `${form}: ${share} %`)
        .join('; ')} | ${bound.bestCuts} | ${number(bound.leastCostKeepingHistory)} |`,
    );
}
