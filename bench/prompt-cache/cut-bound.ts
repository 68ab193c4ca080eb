// The most of a session's input tokens that OpenAI's prompt cache could serve, for any strategy that keeps the
// budget and cuts the way the context engine's rules allow: removal of whole turns from the oldest (of whole rounds
// in a session of one turn, never its user message or its newest round), each writing a summary of one of
// `summarySizes` tokens (up to the summary's reserve), and pruning oldest first, each pruned message taking one
// pruned form (see bound-layout.ts). When to cut, how far, which summary size and when to prune are chosen request
// by request by dynamic programming, with hindsight: the bound holds for a strategy that knows the whole session in
// advance. Also the least cost of any strategy that removes nothing until the budget needs it.
//
// The model. A request is the session's messages up to its end, after the instructions and tools: the oldest ones
// removed up to a removal frontier (a turn boundary) and replaced by the summary, the prunable ones below the prune
// frontier (counted in prunable messages) in their pruned form, the rest whole. What the cache serves of a request is,
// in OpenAI's blocks, the prefix of whole messages it shares with the previous one: all of the previous request when
// nothing before its end changed; up to the first message whose form changed when only the prune frontier moved; the
// instructions (and the summary when it stayed) when the removal or the summary changed. The highest share
// cached ÷ sent is found by Dinkelbach's iteration over the best sum(cached − r · sent) at each ratio r.
import { defaultContextPolicy } from '../../src/context/contracts/context-policy.js';
import { profile } from '../../test/support/check-generated-context.js';
import type { LayoutState, SessionLayout } from './bound-layout.js';
import { openAIBlocks } from './cache-tally.js';

/** The summary sizes a cut may write: none, or up to the engine's reserve for the summary. */
export const defaultSummarySizes = [0, 500, 1000, defaultContextPolicy.summary.reserveTokens];

/** What the best strategy did at one request. */
export interface BestStep {
  state: LayoutState;
  sent: number;
  cached: number;
  /** `append`: all of the previous request kept; `prune`: only the prune frontier moved; `cut`: removal or summary. */
  kind: 'first' | 'append' | 'prune' | 'cut';
}

/** The best strategy at one ratio: its sum(cached − ratio · sent) and its sums (value −Infinity: cannot fit). */
interface Best {
  value: number;
  cached: number;
  sent: number;
  cuts: number;
}

/** max over strategies of sum(cached − ratio · sent), with the best strategy's totals. */
function bestSlack(
  layout: SessionLayout,
  budget: number,
  ratio: number,
  summarySizes: readonly number[],
  trace?: BestStep[],
): Best {
  const { full, pruned, cutPoints, fixed } = layout;
  const fullSum = [0];
  for (const tokens of full) fullSum.push(fullSum.at(-1)! + tokens);
  const prunable = full.flatMap((tokens, index) => (pruned[index]! < tokens ? [index] : []));
  const savedSum = [0];
  for (const index of prunable) savedSum.push(savedSum.at(-1)! + full[index]! - pruned[index]!);
  const ranksBefore = (message: number) => {
    let rank = 0;
    while (rank < prunable.length && prunable[rank]! < message) rank += 1;
    return rank;
  };
  const cutRank = cutPoints.map(ranksBefore);
  const width = prunable.length + 1;
  const summaryTokens = summarySizes.map((tokens) => (tokens === 0 ? 0 : tokens + profile.perMessageTokens));
  // Tokens of a request ending at `end`, from removal frontier `cut`, with the prunable messages below `rank`
  // pruned; `before` is the prefix before prunable `rank`.
  const sent = (end: number, cut: number, rank: number, summary: number) =>
    fixed +
    summaryTokens[summary]! +
    fullSum[end]! -
    fullSum[cutPoints[cut]!]! -
    (savedSum[rank]! - savedSum[cutRank[cut]!]!);
  const before = (cut: number, rank: number, summary: number) => sent(prunable[rank]!, cut, rank, summary);
  const states = summarySizes.length * cutPoints.length * width;
  const at = (summary: number, cut: number, rank: number) => (summary * cutPoints.length + cut) * width + rank;
  // Per request, each state's predecessor (−1: none), the kind of move, and what the cache served.
  const history: { from: Int32Array; kind: Uint8Array; cached: Float64Array }[] = [];
  const kinds: BestStep['kind'][] = ['first', 'append', 'prune', 'cut'];

  const above = new Int32Array(width + 1);
  // Per state, the totals of the best strategy that ends in it.
  let cachedSum = new Float64Array(states);
  let sentSum = new Float64Array(states);
  let cutSum = new Float64Array(states);
  let previous: Float64Array | undefined;
  let previousRequest: SessionLayout['requests'][number] | undefined;
  for (const request of layout.requests) {
    const current = new Float64Array(states).fill(-Infinity);
    const cachedNext = new Float64Array(states);
    const sentNext = new Float64Array(states);
    const cutNext = new Float64Array(states);
    const from = new Int32Array(trace ? states : 0).fill(-1);
    const kind = new Uint8Array(trace ? states : 0);
    const cachedOf = new Float64Array(trace ? states : 0);
    // The best previous state overall and per summary size, for a removal or a new summary.
    let headAny = -1;
    const headSame = summarySizes.map(() => -1);
    if (previous)
      for (let state = 0; state < states; state++) {
        const value = previous[state]!;
        if (value === -Infinity) continue;
        if (headAny < 0 || value > previous[headAny]!) headAny = state;
        const summary = Math.floor(state / (cutPoints.length * width));
        if (headSame[summary]! < 0 || value > previous[headSame[summary]!]!) headSame[summary] = state;
      }
    let feasible = false;
    // A message is pruned the first time it is sent only when the request cannot fit otherwise (everything
    // else removed or pruned, no summary), as the engine previews the newest turn's outputs; removed tool traffic
    // is never new.
    const oldRanks = previousRequest ? ranksBefore(previousRequest.end) : 0;
    const tight = sent(request.end, request.cuts - 1, Math.max(oldRanks, cutRank[request.cuts - 1]!), 0) > budget;
    const ranks = layout.pruneNew && tight ? ranksBefore(request.end) : oldRanks;
    for (let summary = 0; summary < summarySizes.length; summary++)
      for (let cut = 0; cut < request.cuts; cut++) {
        const lowest = cutRank[cut]!;
        const old = previous && cut < previousRequest!.cuts;
        // Suffix maxima of the previous values over ranks above k, for a frontier that moved back.
        above[oldRanks + 1] = -1;
        if (old)
          for (let rank = oldRanks; rank >= lowest; rank--) {
            const state = at(summary, cut, rank);
            const next = above[rank + 1]!;
            above[rank] = next >= 0 && previous![next]! >= previous![state]! ? next : state;
          }
        let movedUp = -1;
        let movedUpValue = -Infinity;
        for (let rank = lowest; rank <= Math.max(lowest, ranks); rank++) {
          // A frontier that moved up from k' < k changed the message of prunable k' first.
          if (old && rank - 1 >= lowest && rank - 1 < oldRanks) {
            const state = at(summary, cut, rank - 1);
            const value = previous![state]! + openAIBlocks(before(cut, rank - 1, summary));
            if (value > movedUpValue) [movedUp, movedUpValue] = [state, value];
          }
          const tokens = sent(request.end, cut, rank, summary);
          if (tokens > budget) continue;
          let best = previous ? -Infinity : 0;
          let choice = [-1, 0, 0];
          const consider = (state: number, cached: number, move: number) => {
            if (state < 0 || previous![state]! === -Infinity) return;
            const value = previous![state]! + cached;
            if (value > best) [best, choice] = [value, [state, move, cached]];
          };
          if (previous) {
            consider(headAny, openAIBlocks(fixed), 3);
            consider(headSame[summary]!, openAIBlocks(fixed + summaryTokens[summary]!), 3);
          }
          if (old) {
            const same = Math.min(rank, oldRanks);
            consider(at(summary, cut, same), openAIBlocks(sent(previousRequest!.end, cut, same, summary)), 1);
            if (movedUp >= 0) consider(movedUp, openAIBlocks(before(cut, movedUp % width, summary)), 2);
            if (rank < oldRanks) consider(above[rank + 1]!, openAIBlocks(before(cut, rank, summary)), 2);
          }
          if (best === -Infinity) continue;
          const state = at(summary, cut, rank);
          const [source, move, cached] = choice as [number, number, number];
          current[state] = best - ratio * tokens;
          cachedNext[state] = (source >= 0 ? cachedSum[source]! : 0) + cached;
          sentNext[state] = (source >= 0 ? sentSum[source]! : 0) + tokens;
          cutNext[state] = (source >= 0 ? cutSum[source]! : 0) + (move === 3 ? 1 : 0);
          if (trace) [from[state], kind[state], cachedOf[state]] = [source, move, cached];
          feasible = true;
        }
      }
    if (!feasible) return { value: -Infinity, cached: 0, sent: 0, cuts: 0 };
    if (trace) history.push({ from, kind, cached: cachedOf });
    [cachedSum, sentSum, cutSum] = [cachedNext, sentNext, cutNext];
    previous = current;
    previousRequest = request;
  }
  let end = 0;
  for (let state = 0; state < states; state++) if (previous![state]! > previous![end]!) end = state;
  if (trace)
    for (let index = layout.requests.length - 1, state = end; index >= 0; index--) {
      const rank = state % width;
      const cut = Math.floor(state / width) % cutPoints.length;
      const summary = Math.floor(state / (cutPoints.length * width));
      trace.unshift({
        state: { cut, rank, summaryTokens: summarySizes[summary]! },
        sent: sent(layout.requests[index]!.end, cut, rank, summary),
        cached: history[index]!.cached[state]!,
        kind: kinds[history[index]!.kind[state]!]!,
      });
      state = history[index]!.from[state]!;
    }
  return { value: previous![end]!, cached: cachedSum[end]!, sent: sentSum[end]!, cuts: cutSum[end]! };
}

/**
 * The highest share of sent tokens OpenAI could serve from its cache over every strategy of the model above (NaN
 * when some request cannot fit), the number of cuts of a strategy that reaches it, and with `trace` its steps.
 * Dinkelbach's iteration: the best strategy at ratio r has a share r' ≥ r, and r is the highest share when the
 * best strategy at r has sum(cached − r · sent) = 0.
 */
export function cutAwareBound(
  layout: SessionLayout,
  budget: number,
  { summarySizes = defaultSummarySizes, trace = false }: { summarySizes?: readonly number[]; trace?: boolean } = {},
): { share: number; cuts: number; steps: BestStep[] } {
  let ratio = 0;
  for (;;) {
    const best = bestSlack(layout, budget, ratio, summarySizes);
    if (best.value === -Infinity) return { share: Number.NaN, cuts: 0, steps: [] };
    const share = best.cached / best.sent;
    if (share - ratio < 1e-9) {
      const steps: BestStep[] = [];
      if (trace) bestSlack(layout, budget, ratio, summarySizes, steps);
      return { share, cuts: best.cuts, steps };
    }
    ratio = share;
  }
}

/**
 * The least estimated cost (uncached tokens, cached ones at `cachedPrice`) of any strategy that removes nothing
 * until the next request would exceed the budget: between two cuts a request is the previous one and its new
 * messages, and after a cut it holds at least the instructions and its new messages. A request's new messages are
 * never cached, so it costs at least `cachedPrice` · sent + (1 − `cachedPrice`) · new. Minimised over every cut
 * and every size a cut leaves, by dynamic programming over the request's size in tokens.
 */
export function leastCostKeepingHistory(layout: SessionLayout, budget: number, cachedPrice: number): number {
  const { full, fixed } = layout;
  let previous: Float64Array | undefined;
  let previousEnd = 0;
  for (const request of layout.requests) {
    let fresh = 0;
    for (let index = previousEnd; index < request.end; index++) fresh += full[index]!;
    const current = new Float64Array(budget + 1).fill(Infinity);
    const cost = (tokens: number) => cachedPrice * tokens + (1 - cachedPrice) * fresh;
    if (!previous) {
      if (fixed + fresh <= budget)
        current[fixed + fresh] = cachedPrice * (fixed + fresh) + (1 - cachedPrice) * (fixed + fresh);
    } else {
      // The cheapest request that had to be cut: the previous one and these messages do not fit.
      let mustCut = Infinity;
      for (let tokens = Math.max(0, budget - fresh + 1); tokens <= budget; tokens++)
        mustCut = Math.min(mustCut, previous[tokens]!);
      for (let tokens = fixed + fresh; tokens <= budget; tokens++) {
        const grown = tokens - fresh;
        const kept = grown >= 0 ? previous[grown]! : Infinity;
        current[tokens] = Math.min(kept, mustCut) + cost(tokens);
      }
    }
    previous = current;
    previousEnd = request.end;
  }
  let least = Infinity;
  for (const cost of previous!) least = Math.min(least, cost);
  return least;
}
