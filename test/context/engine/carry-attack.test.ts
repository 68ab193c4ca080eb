// Attacks on the carried cut (`policy.summary.startFrom: 'previous-cut'`): snapshots whose `pruned` record another
// writer (or a corrupted row) made, read on the hot path of every request.
import { describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import { createContextEngine, type ContextReport } from '../../../src/context/index.js';
import type { TokenCounter } from '../../../src/tokens/token-counter.js';
import { createMemoryContextStore, type MemoryContextStore } from '../../../src/testing/index.js';
import { chatSession } from '../../../bench/prompt-cache/sessions.js';
import { appendCounted } from '../../../bench/prompt-cache/strategies.js';
import { instructions, profile, toolDefinitions } from '../../support/check-generated-context.js';
import { tokenCounter } from '../fixtures.js';

const BIG = 1_000_000;

/** The fixture's counter, which throws once it has counted `limit` texts (a loop that never ends fails instead). */
function boundedCounter(limit: number): TokenCounter {
  let calls = 0;
  return {
    id: tokenCounter.id,
    count: (text) => {
      if (++calls > limit) throw new Error(`counted more than ${limit} texts: a runaway loop`);
      return tokenCounter.count(text);
    },
  };
}

async function threadWithTools(seed: number, turns: number): Promise<MemoryContextStore> {
  const session = await chatSession(seed, turns);
  const store = createMemoryContextStore();
  for (const turn of session.turns.slice(0, -1)) {
    appendCounted(store, turn.user as UIMessage, tokenCounter);
    appendCounted(store, turn.answer! as UIMessage, tokenCounter);
  }
  appendCounted(store, session.turns.at(-1)!.user as UIMessage, tokenCounter);
  return store;
}

const oldCallIds = (store: MemoryContextStore) =>
  store.messages.slice(0, -1).flatMap((row) => JSON.stringify(row.message).match(/t\d+-c\d+/g) ?? []);

async function writeRecord(store: MemoryContextStore, pruned: unknown) {
  await store.writeSnapshot({
    expectedVersion: 0,
    throughSequence: 0,
    includedSequences: store.messages.map((row) => row.sequence),
    policyVersion: 'agent-history/context-v1',
    messagesHash: 'anything',
    budget: { contextWindow: profile.contextWindow, maxOutputTokens: profile.maxOutputTokens, maxInputTokens: BIG },
    pruned,
  });
}

function engineFor(store: MemoryContextStore, counter: TokenCounter) {
  const reports: ContextReport[] = [];
  const engine = createContextEngine({
    store,
    profile,
    tokenCounter: counter,
    instructions,
    toolDefinitions,
    maxInputTokens: BIG,
    onReport: (report) => reports.push(report),
  });
  return { engine, reports };
}

describe('a carried cut from a hostile snapshot record', () => {
  it('should not loop forever on a preview of a negative size', async () => {
    const store = await threadWithTools(3, 6);
    const ids = [...new Set(oldCallIds(store))];
    expect(ids.length).toBeGreaterThan(0);
    for (const part of [undefined, 'input'] as const) {
      const copy = createMemoryContextStore();
      for (const row of store.messages) appendCounted(copy, row.message as UIMessage, tokenCounter, row.pinned);
      await writeRecord(copy, {
        previews: ids.map((toolCallId) => ({ toolCallId, maxTokens: -1, ...(part ? { part } : {}) })),
      });
      const { engine } = engineFor(copy, boundedCounter(200_000));
      const built = await engine.buildInitialContext();
      expect(built.messages.length).toBeGreaterThan(0);
    }
  }, 120_000);
});
