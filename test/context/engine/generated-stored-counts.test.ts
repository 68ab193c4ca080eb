// Stored counts change nothing but the work: over generated conversations (test/support/agent-conversations.ts),
// rows carrying the counts the store writes (the message's count and, for most, per-part counts; some rows with
// the count only or none) give every model call the same size, by the engine's count and by an independent one, as
// rows the engine counts itself, and every rule of the context engine holds (test/support/check-generated-context.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateConversation } from '../../support/agent-conversations.js';
import { runGeneratedConversation } from '../../support/check-generated-context.js';
import { withStoredCounts } from '../../support/stored-counts.js';
import { tokenCounter } from '../fixtures.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const timeout = 120_000 + RUNS * 800;

describe('generated conversations with stored counts', () => {
  it(
    'should prepare calls of the same size as without stored counts, within the budget and with nothing lost',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (seed) => {
          const conversation = generateConversation(seed, { maxMessages: 200 });
          const counted = await runGeneratedConversation(conversation, tokenCounter);
          const stored = await runGeneratedConversation(withStoredCounts(conversation, tokenCounter), tokenCounter);
          expect(stored.refused === null).toBe(counted.refused === null);
          const sizes = (run: typeof stored) => run.calls.map((call) => [call.engineTokens, call.sentTokens]);
          expect(sizes(stored)).toEqual(sizes(counted));
          for (const call of stored.calls) {
            expect(call.overBudgetTokens).toBe(0);
            expect(call.engineTokens).toBeGreaterThanOrEqual(call.sentTokens);
            expect(call.splitPairs).toEqual([]);
            expect(call.lostNewest).toBe(false);
            expect(call.lostPinned).toEqual([]);
            expect(call.invented).toEqual([]);
            expect(call.snapshotExact).not.toBe(false);
          }
        }),
        { numRuns: RUNS, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
      );
    },
    timeout,
  );
});
