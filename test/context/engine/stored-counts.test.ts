import { describe, expect, it } from 'vitest';
import {
  countStoredMessageTokens,
  countStoredPartTokens,
  createContextEngine,
  storedTokenCountId,
} from '../../../src/context/index.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import type { TokenCounter } from '../../../src/tokens/token-counter.js';
import { createMemoryContextStore } from '../../../src/testing/index.js';
import { assistant, reasoning, smallProfile, stepStart, text, tokenCounter, user, words } from '../fixtures.js';

/** The default counter, recording every text it is asked to count. */
function spyCounter(): TokenCounter & { counted: string[] } {
  const counted: string[] = [];
  return { id: tokenCounter.id, counted, count: (value) => (counted.push(value), tokenCounter.count(value)) };
}

const thread: ContextUIMessage[] = [
  user('u1', `first-question ${words(30, 'alpha')}`),
  assistant('a1', stepStart, reasoning(`first-thought ${words(60, 'hmm')}`), text(`first-answer ${words(50, 'beta')}`)),
  user('u2', `second-question ${words(30, 'gamma')}`),
  assistant(
    'a2',
    stepStart,
    reasoning(`second-thought ${words(60, 'hmm')}`),
    text(`second-answer ${words(50, 'delta')}`),
  ),
  user('u3', `third-question ${words(20, 'omega')}`),
];
/** What no stored message's own text may ever reach the counter as: a word only that message has. */
const storedMarkers = ['first-question', 'first-answer', 'second-question', 'second-answer', 'third-question'];

async function build(extraPerMessage: number, partCounts = false) {
  const counter = spyCounter();
  const store = createMemoryContextStore();
  for (const message of thread) {
    // Per-part counts as the store writes them, the extra put on every part (so that removing one subtracts it).
    const parts = countStoredPartTokens({ message, tokenCounter }).map((count) => count + extraPerMessage);
    store.appendMessage({
      message,
      tokenCount: partCounts
        ? parts.reduce((sum, count) => sum + count, 0)
        : countStoredMessageTokens({ message, tokenCounter }) + extraPerMessage,
      tokenCounterId: storedTokenCountId(tokenCounter),
      ...(partCounts ? { partTokenCounts: parts } : {}),
    });
  }
  counter.counted.length = 0;
  // Old reasoning is pruned although the context fits: pruning must subtract stored part counts.
  const engine = createContextEngine({
    store,
    profile: smallProfile(40_000, 500),
    tokenCounter: counter,
    policy: { prune: { reasoning: 'outside-newest-turns' } },
  });
  const { messages, report } = await engine.buildInitialContext();
  return { counter, messages, report, engine };
}

describe('stored token counts', () => {
  it('should never recount a stored message, also when pruning removes parts of it: the stored count minus the removed parts is used', async () => {
    const exact = await build(0);
    const inflated = await build(1000);
    // The older turn's reasoning was pruned from a message whose count is stored.
    const pruned = inflated.report.stages.find((stage) => stage.stage === 'prune');
    expect(pruned?.removed.some((entry) => entry.reason === 'reasoning-pruned')).toBe(true);
    expect(JSON.stringify(inflated.messages)).not.toContain('first-thought');
    // Only the removed reasoning was counted; no stored message's own text was.
    for (const { counter } of [exact, inflated])
      for (const marker of storedMarkers) expect(counter.counted.filter((value) => value.includes(marker))).toEqual([]);
    expect(inflated.counter.counted.some((value) => value.includes('first-thought'))).toBe(true);
    // The estimate is the stored counts as they are (1000 over the true count each), less the removed parts.
    expect(inflated.report.estimatedTokens - exact.report.estimatedTokens).toBe(1000 * thread.length);
    // The next step gets copies of what was built: still nothing recounted, the same estimate.
    inflated.counter.counted.length = 0;
    const step = await inflated.engine.prepareStep({ messages: structuredClone(inflated.messages), stepNumber: 0 });
    expect(step.messages).toBeUndefined();
    expect(step.report.estimatedTokens).toBe(inflated.report.estimatedTokens);
    for (const marker of storedMarkers)
      expect(inflated.counter.counted.filter((value) => value.includes(marker))).toEqual([]);
  });

  it('should tokenize nothing when pruning a message stored with per-part counts: the stored part counts are subtracted', async () => {
    const counted = await build(0);
    const exact = await build(0, true);
    expect(exact.messages).toEqual(counted.messages);
    expect(exact.report.estimatedTokens).toBe(counted.report.estimatedTokens);
    expect(exact.counter.counted.filter((value) => value.includes('first-thought'))).toEqual([]);
    // Inflated part counts show the stored ones are used: the removed reasoning takes its stored count with it.
    const inflated = await build(1000, true);
    const parts = thread.map((message) => countStoredPartTokens({ message, tokenCounter }).length);
    const prunedParts = inflated.report.stages
      .find((stage) => stage.stage === 'prune')!
      .removed.filter((entry) => entry.reason === 'reasoning-pruned').length;
    expect(prunedParts).toBeGreaterThan(0); // one reasoning part per removal in this thread
    const allParts = parts.reduce((sum, count) => sum + count, 0);
    expect(inflated.report.estimatedTokens - exact.report.estimatedTokens).toBe(1000 * (allParts - prunedParts));
  });
});
