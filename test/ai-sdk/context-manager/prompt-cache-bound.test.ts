// The prompt-cache bench's bounds (bench/prompt-cache/cut-bound.ts) are what the docs use to call a target out of
// reach, so each is checked against a second, plain implementation: the highest cacheable share against every
// sequence of states enumerated on small generated sessions, with the shared prefix found by comparing the
// requests' messages; the strategy it reports replayed as real requests through the bench's own tally; the least
// cost of keeping history against a plain recursion.
import { describe, expect, it } from 'vitest';
import { loadO200kTokenCounter } from '../../../src/tokens/token-counter.js';
import {
  layoutRequest,
  sessionLayout,
  unmanagedRequests,
  type SessionLayout,
} from '../../../bench/prompt-cache/bound-layout.js';
import { emptyTally, openAIBlocks, record } from '../../../bench/prompt-cache/cache-tally.js';
import { cutAwareBound, leastCostKeepingHistory } from '../../../bench/prompt-cache/cut-bound.js';
import { chatSession, toolLoopSession } from '../../../bench/prompt-cache/sessions.js';
import { createRandom } from '../../support/agent-conversations.js';
import { profile } from '../../support/check-generated-context.js';

type Random = ReturnType<typeof createRandom>;

/** A small session: message sizes, some prunable (some to nothing), requests growing by 1–3 messages. */
function smallLayout(random: Random): { layout: SessionLayout; budget: number } {
  const count = random.int(4, 8);
  const full = Array.from({ length: count }, () => random.int(60, 900));
  const pruned = full.map((tokens) =>
    random.chance(0.5) ? (random.chance(0.3) ? 0 : random.int(5, tokens - 1)) : tokens,
  );
  const cutPoints = [
    0,
    ...Array.from({ length: count - 1 }, (_item, index) => index + 1).filter(() => random.chance(0.4)),
  ];
  const requests: SessionLayout['requests'] = [];
  for (let end = random.int(1, 2); requests.length < 4 && end <= count; end += random.int(1, 3))
    requests.push({ end, cuts: Math.max(1, cutPoints.filter((cut) => cut <= end - 1).length) });
  return {
    layout: {
      head: [],
      fixed: random.int(50, 400),
      whole: [],
      full,
      prunedForm: [],
      pruned,
      requests,
      cutPoints,
      pruneNew: random.chance(0.5),
    },
    budget: random.int(1200, 3200),
  };
}

/** Every state of every request, the shared prefix found by comparing message labels: the best cached ÷ sent. */
function bruteForceShare(layout: SessionLayout, budget: number, summarySizes: number[]): number {
  const prunable = layout.full.flatMap((tokens, index) => (layout.pruned[index]! < tokens ? [index] : []));
  const before = (message: number) => prunable.filter((index) => index < message).length;
  type Request = { labels: string[]; sizes: number[]; sent: number; oldOnly: boolean };
  const requestsOf = (index: number): Request[] => {
    const { end, cuts } = layout.requests[index]!;
    const oldRanks = index === 0 ? 0 : before(layout.requests[index - 1]!.end);
    const all: Request[] = [];
    for (const summary of summarySizes)
      for (let cut = 0; cut < cuts; cut++)
        for (let rank = before(layout.cutPoints[cut]!); rank <= before(end); rank++) {
          const labels = ['instructions'];
          const sizes = [layout.fixed];
          if (summary > 0) {
            labels.push(`summary ${summary}`);
            sizes.push(summary + profile.perMessageTokens);
          }
          for (let message = layout.cutPoints[cut]!; message < end; message++) {
            const isPruned = prunable.indexOf(message) >= 0 && prunable.indexOf(message) < rank;
            const tokens = isPruned ? layout.pruned[message]! : layout.full[message]!;
            if (tokens === 0) continue;
            labels.push(`${message} ${isPruned ? 'pruned' : 'whole'}`);
            sizes.push(tokens);
          }
          const sent = sizes.reduce((sum, tokens) => sum + tokens, 0);
          // Below the removal frontier a rank prunes nothing that is not removed anyway.
          const oldOnly = rank <= Math.max(oldRanks, before(layout.cutPoints[cut]!));
          if (sent <= budget) all.push({ labels, sizes, sent, oldOnly });
        }
    // New messages are pruned only when nothing else fits, and removed tool traffic never.
    const fitsWithOld = all.some((request) => request.oldOnly);
    return all.filter((request) => request.oldOnly || (layout.pruneNew && !fitsWithOld));
  };
  const choices = layout.requests.map((_request, index) => requestsOf(index));
  let best = -Infinity;
  const walk = (index: number, previous: Request | undefined, cached: number, sent: number) => {
    if (index === choices.length) {
      best = Math.max(best, cached / sent);
      return;
    }
    for (const request of choices[index]!) {
      let shared = 0;
      let prefix = 0;
      while (previous && shared < previous.labels.length && request.labels[shared] === previous.labels[shared]) {
        prefix += request.sizes[shared]!;
        shared += 1;
      }
      walk(index + 1, request, cached + (previous ? openAIBlocks(prefix) : 0), sent + request.sent);
    }
  };
  walk(0, undefined, 0, 0);
  return best;
}

describe('the cut-aware bound of the prompt-cache bench', () => {
  it('equals the best of every strategy enumerated, on 400 small sessions', () => {
    const random = createRandom(2026);
    let reachable = 0;
    for (let seed = 0; seed < 400; seed++) {
      const { layout, budget } = smallLayout(random);
      const summarySizes = [0, 400, 900];
      const brute = bruteForceShare(layout, budget, summarySizes);
      const { share, steps } = cutAwareBound(layout, budget, { summarySizes, trace: true });
      if (brute === -Infinity) {
        expect(share, `session ${seed}`).toBeNaN();
        continue;
      }
      reachable += 1;
      expect(share, `session ${seed}`).toBeCloseTo(brute, 9);
      const cached = steps.reduce((sum, step) => sum + step.cached, 0);
      const sent = steps.reduce((sum, step) => sum + step.sent, 0);
      expect(cached / sent, `session ${seed}: the reported strategy`).toBeGreaterThanOrEqual(share - 1e-9);
    }
    expect(reachable).toBeGreaterThan(200);
  });

  it("reports a strategy whose requests the bench's tally counts the same, in a chat and a tool loop", async () => {
    const tokenCounter = await loadO200kTokenCounter();
    for (const [session, budget] of [
      [await chatSession(6000, 10), 6000],
      [toolLoopSession(6000, 40), 6000],
    ] as const) {
      const layout = sessionLayout(await unmanagedRequests(session), { previewTokens: 64 }, tokenCounter, budget);
      const { share, steps } = cutAwareBound(layout, budget, { trace: true });
      expect(steps.filter((step) => step.kind === 'cut').length, session.name).toBeGreaterThan(0);
      const tally = emptyTally();
      let previous;
      for (const [index, step] of steps.entries()) {
        const request = layoutRequest(layout, index, step.state, (tokens) => ' a'.repeat(tokens));
        record(tally, previous, request, budget);
        previous = request;
      }
      expect(tally.overBudget, session.name).toBe(0);
      expect(tally.sent, session.name).toBe(steps.reduce((sum, step) => sum + step.sent, 0));
      expect(tally.cacheableOpenAI, session.name).toBe(steps.reduce((sum, step) => sum + step.cached, 0));
      expect(tally.cacheableOpenAI / tally.sent, session.name).toBeGreaterThanOrEqual(share - 1e-9);
    }
  });
});

describe('the least cost of keeping history until the budget is reached', () => {
  it('equals a plain recursion over every size a cut may leave, on 200 small sessions', () => {
    const random = createRandom(7);
    for (let seed = 0; seed < 200; seed++) {
      const fixed = random.int(1, 6);
      const full = Array.from({ length: random.int(3, 9) }, () => random.int(1, 12));
      const requests: SessionLayout['requests'] = [];
      for (let end = 1; end <= full.length; end += random.int(1, 2)) requests.push({ end, cuts: 1 });
      const budget = random.int(14, 40);
      const layout = {
        head: [],
        fixed,
        whole: [],
        full,
        prunedForm: [],
        pruned: full,
        requests,
        cutPoints: [0],
        pruneNew: false,
      };
      const fresh = requests.map((request, index) =>
        full.slice(index === 0 ? 0 : requests[index - 1]!.end, request.end).reduce((sum, tokens) => sum + tokens, 0),
      );
      const memo = new Map<string, number>();
      const least = (index: number, size: number): number => {
        if (index === requests.length) return 0;
        const key = `${index} ${size}`;
        if (!memo.has(key)) memo.set(key, leastFrom(index, size));
        return memo.get(key)!;
      };
      const leastFrom = (index: number, size: number): number => {
        const cost = (tokens: number) => 0.1 * tokens + 0.9 * fresh[index]! + least(index + 1, tokens);
        if (size + fresh[index]! <= budget) return cost(size + fresh[index]!);
        let best = Infinity;
        for (let tokens = fixed + fresh[index]!; tokens <= budget; tokens++) best = Math.min(best, cost(tokens));
        return best;
      };
      const first = fixed + fresh[0]!;
      const expected = first > budget ? Infinity : first + least(1, first);
      expect(leastCostKeepingHistory(layout, budget, 0.1), `session ${seed}`).toBeCloseTo(expected, 6);
    }
  });
});
