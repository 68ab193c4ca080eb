// What a tokenizer makes of the objects a store's cache keeps (part counts, previews, pruning plans) is remembered
// by the counter's id, not by the counter object: every request's engine gets a counter object of its own (the
// default one is scoped per engine, and docs/ai-sdk.md's `scopeTokenCounter(counter, tenantId)` makes a new one per
// request), so a memo by object would never be found by the thread's next request. Observed through the tokenizer:
// the next request of an unchanged thread, through the same cache, with another counter object of the same id,
// counts nothing again; a counter of another id counts for itself.
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import type { ContextMessage, ContextStore, LoadedContext } from '../../../src/model/context-store.js';
import type { TokenCounter } from '../../../src/tokens/token-counter.js';
import { createContextMessageCache } from '../../../src/tokens/context-message-cache.js';
import { turn } from '../../../bench/workloads/w7-first-call.js';
import { stored } from '../fixtures.js';

// A counter whose scoped views are new objects (as the default counter's are), counting its calls.
function countingCounter(id: string) {
  let calls = 0;
  const view = (): TokenCounter => ({
    id,
    count: (text) => {
      calls += 1;
      return Math.ceil(text.length / 4);
    },
    scoped: () => view(),
  });
  return { counter: view(), calls: () => calls };
}

// Rows without stored counts (written before counts were stored, or by a custom store): every message is counted.
function rows(): ContextMessage[] {
  const messages = Array.from({ length: 40 }, (_item, index) => turn(index)).flat();
  return messages.map((message, index) =>
    stored(index + 1, message, {
      rowId: `00000000-0000-4000-8000-${String(index + 1).padStart(12, '0')}`,
      contentVersion: 1,
    }),
  );
}

async function request(store: ContextStore, tokenCounter: TokenCounter): Promise<ModelMessage[]> {
  // A budget the thread exceeds: older turns are pruned, the oldest kept one shrunk by previews.
  const manager = createContextManager({ store, model: 'openai:gpt-4o', maxInputTokens: 6_000, tokenCounter });
  const messages = await manager.initialMessages();
  await manager.prepareStep({ messages, stepNumber: 0, steps: [] } as never);
  return messages;
}

describe('memos by counter id', () => {
  it('should count nothing again for the next request through the same cache, with another counter object', async () => {
    const thread = rows();
    const cache = createContextMessageCache().scoped('tenant\u0000thread');
    const store: ContextStore = {
      messageCache: cache,
      loadContext: async (): Promise<LoadedContext> => ({
        snapshot: null,
        latestSummary: null,
        tail: structuredClone(thread),
        pinned: [],
        currentVersion: 0,
      }),
      writeSummary: async () => {
        throw new Error('no summarizer');
      },
      writeSnapshot: async (input) => ({ ...input, id: 'snapshot', version: 1, stepNumber: null }) as never,
    };
    const base = countingCounter('counting/chars-4');
    const first = await request(store, base.counter.scoped!('tenant'));
    const counted = base.calls();
    expect(counted).toBeGreaterThan(thread.length);
    const second = await request(store, base.counter.scoped!('tenant'));
    expect(base.calls()).toBe(counted);
    expect(second).toEqual(first);
    // Another tokenizer's counts are its own.
    const other = countingCounter('counting/chars-3');
    await request(store, other.counter);
    expect(other.calls()).toBeGreaterThan(thread.length);
  });
});
