// The window of newest turns the first call starts from (src/context/engine/context-window.ts): its edges, where the
// whole thread must be compacted instead. Each case compares with the reference walk (`_internal.wholeThread`).
import { describe, expect, it } from 'vitest';
import { createContextEngine, storedTokenCountId, countStoredMessageTokens } from '../../../src/context/index.js';
import type { ContextMessage } from '../../../src/model/context-store.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { createMemoryContextStore } from '../../../src/testing/memory-context-store.js';
import { assistant, smallProfile, stored, text, tokenCounter, user, words } from '../fixtures.js';

const counted = (sequence: number, message: ContextUIMessage, extra: Partial<ContextMessage> = {}) =>
  stored(sequence, message, {
    tokenCount: countStoredMessageTokens({ message, tokenCounter }),
    tokenCounterId: storedTokenCountId(tokenCounter),
    ...extra,
  });

async function both(rows: ContextMessage[]) {
  const build = async (wholeThread: boolean) => {
    const store = createMemoryContextStore({ messages: rows });
    const engine = createContextEngine({
      store,
      profile: smallProfile(4000, 500),
      tokenCounter,
      _internal: { wholeThread },
    });
    const { messages, report } = await engine.buildInitialContext();
    return { messages, budget: report.budget, snapshots: store.snapshots };
  };
  return { fast: await build(false), reference: await build(true) };
}

describe('the window of newest turns', () => {
  it('should compact the whole thread when nothing in the window reaches the model', async () => {
    const rows: ContextMessage[] = [];
    for (let turn = 0; turn < 20; turn++) {
      rows.push(counted(rows.length + 1, user(`u${turn}`, `Question ${turn}: ${words(60)}`)));
      rows.push(counted(rows.length + 1, assistant(`a${turn}`, text(`Answer ${turn}: ${words(120)}`))));
    }
    // The newest turns: invalid user messages (parts not an array: dropped by validation), with large stored counts.
    for (let turn = 0; turn < 6; turn++)
      rows.push(
        stored(
          rows.length + 1,
          { id: `bad${turn}`, role: 'user', parts: null as never },
          {
            tokenCount: 5_000,
            tokenCounterId: storedTokenCountId(tokenCounter),
          },
        ),
      );
    const { fast, reference } = await both(rows);
    expect(fast.messages.length).toBeGreaterThan(0);
    expect(fast).toEqual(reference);
  });

  it("should give the whole walk's context when the newest turns are deleted or excluded", async () => {
    const rows: ContextMessage[] = [];
    for (let turn = 0; turn < 40; turn++) {
      const hidden = turn >= 30 && turn < 38 ? { contextState: 'excluded' as const } : {};
      rows.push(counted(rows.length + 1, user(`u${turn}`, `Question ${turn}: ${words(60)}`), hidden));
      rows.push(counted(rows.length + 1, assistant(`a${turn}`, text(`Answer ${turn}: ${words(120)}`)), hidden));
    }
    const { fast, reference } = await both(rows);
    expect(fast).toEqual(reference);
  });
});
