import type { ContextMessage } from '../../src/model/context-store.js';
import type { ContextPolicyInput } from '../../src/context/index.js';
import type { createRandom } from './agent-conversations.js';

/** The row as a store with ids keeps it: a row id (per seed, so threads never share one) and a content version. */
export function withRowId(row: ContextMessage, seed: number): ContextMessage {
  const rowId = `${seed.toString(16).padStart(8, '0')}-0000-4000-8000-${String(row.sequence).padStart(12, '0')}`;
  return { ...row, rowId, contentVersion: 1 };
}

/** A pruning policy drawn from every option's values (turn counts 0 to 3). */
export function drawPolicy(random: ReturnType<typeof createRandom>): ContextPolicyInput {
  const pick = <T>(items: readonly T[]): T => items[random.int(0, items.length - 1)]!;
  return {
    prune: {
      reasoning: pick(['outside-newest-turns', 'all', 'none'] as const),
      reasoningTurns: random.int(0, 3),
      toolTraffic: pick(['when-over-budget', 'outside-newest-turns', 'none'] as const),
      toolTrafficTurns: random.int(0, 3),
      emptyMessages: pick(['remove', 'keep'] as const),
    },
  };
}
