// The first call of a long thread starts from its newest turns (a window of the stored counts) and sets the older
// turns aside unconverted. Over generated conversations (test/support/agent-conversations.ts) with the counts the
// store writes, every model call and every snapshot must be exactly what the whole-thread walk (the reference,
// `_internal.wholeThread`) gives: an early stop that drops a turn, a pinned message or a pruned call the whole
// walk keeps shows as a difference here.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { ContextBudgetExceededError, type ContextReport, type TokenCounter } from '../../../src/context/index.js';
import { createMemoryContextStore } from '../../../src/testing/memory-context-store.js';
import { generateConversation, type GeneratedConversation } from '../../support/agent-conversations.js';
import { createGeneratedEngine } from '../../support/check-generated-context.js';
import { withStoredCounts } from '../../support/stored-counts.js';
import { tokenCounter } from '../fixtures.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const timeout = 120_000 + RUNS * 1_500;

interface Walk {
  calls: Array<{ messages: ModelMessage[]; report: Omit<ContextReport, 'durationMs' | 'stages'> }>;
  snapshots: readonly unknown[];
  refused: string | null;
  /** Messages the first call converted (fewer than the thread's when the window held). */
  converted: number;
}

async function walk(conversation: GeneratedConversation, counter: TokenCounter, wholeThread: boolean): Promise<Walk> {
  const store = createMemoryContextStore({ messages: conversation.rows });
  const engine = createGeneratedEngine(conversation, store, counter, { wholeThread });
  const calls: Walk['calls'] = [];
  let converted = 0;
  const keep = (messages: ModelMessage[], report: ContextReport) => {
    const { durationMs: _durationMs, stages, ...rest } = report;
    const convert = stages.find((stage) => stage.stage === 'convert');
    if (convert && 'storedCounts' in convert) converted = convert.storedCounts + convert.countedSequences.length;
    calls.push({ messages: [...messages], report: rest });
  };
  try {
    const initial = await engine.buildInitialContext();
    let messages = initial.messages;
    keep(messages, initial.report);
    for (const [index, step] of conversation.steps.entries()) {
      messages = [...messages, ...step];
      const prepared = await engine.prepareStep({ messages, stepNumber: index + 1 });
      messages = prepared.messages ?? messages;
      keep(messages, prepared.report);
    }
  } catch (error) {
    if (!(error instanceof ContextBudgetExceededError)) throw error;
    return { calls, snapshots: store.snapshots, refused: error.message, converted };
  }
  return { calls, snapshots: store.snapshots, refused: null, converted };
}

describe('the first call of a long thread', () => {
  it(
    'should prepare the same calls and write the same snapshots from the newest turns as from the whole thread',
    async () => {
      let windowed = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.constantFrom<[number, number]>([400, 4_000], [2_000, 30_000], [2_000, 200_000]),
          async (seed, budget) => {
            const generated = generateConversation(seed, { maxMessages: 400, budget });
            const conversation = withStoredCounts({ ...generated, summarizer: false }, tokenCounter);
            const reference = await walk(conversation, tokenCounter, true);
            const fast = await walk(conversation, tokenCounter, false);
            expect(fast.refused).toBe(reference.refused);
            expect(fast.calls).toEqual(reference.calls);
            expect(fast.snapshots).toEqual(reference.snapshots);
            if (fast.converted < reference.converted) windowed += 1;
          },
        ),
        { numRuns: RUNS, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
      );
      // The window must have been used, or this compares the whole walk with itself. It holds in about one run of
      // ten (random seeds), so "more than a tenth" failed by chance in CI; none in 60 runs has odds of about 1 in 500.
      expect(windowed).toBeGreaterThan(0);
    },
    timeout,
  );
});
