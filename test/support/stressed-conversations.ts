// Stresses a generated conversation where a window of its newest turns is estimated from the stored counts: threads
// heavy in tool traffic or in reasoning, pinned messages far back, texts that count far fewer tokens than their
// characters suggest, rows without per-part counts or counted by another counter.
import fc from 'fast-check';
import type { ContextMessage } from '../../src/model/context-store.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { createRandom, generateConversation, type GeneratedConversation } from './agent-conversations.js';
import { withStoredCounts } from './stored-counts.js';

/** How a generated thread is stressed (applied to its rows before they are counted). */
export interface Stress {
  /** Extra traffic in older assistant messages: large tool outputs, long reasoning, or none. */
  heavy: 'tools' | 'reasoning' | 'none';
  /** Pin a few of the oldest tenth of the messages. */
  pinFarBack: boolean;
  /** Add to assistant messages a text that counts far fewer tokens than its characters suggest (a ruler). */
  rulers: boolean;
  /** Share of the rows whose per-part counts are dropped (a count only), and share counted by another counter. */
  countOnly: number;
  otherCounter: number;
}

export const stressArbitrary = fc.record<Stress>({
  heavy: fc.constantFrom('tools', 'reasoning', 'none'),
  pinFarBack: fc.boolean(),
  rulers: fc.boolean(),
  countOnly: fc.constantFrom(0, 0.1, 0.5, 1),
  otherCounter: fc.constantFrom(0, 0.2, 0.6),
});

export const bigOutput = (index: number) => ({
  rows: Array.from({ length: 60 }, (_row, row) => ({ id: row, note: `entry ${index}-${row} of the audit log` })),
});

function stressRows(rows: readonly ContextMessage[], stress: Stress, seed: number): ContextMessage[] {
  const random = createRandom(seed ^ 0x57_7e55);
  const farBack = Math.max(1, Math.floor(rows.length / 10));
  return rows.map((row, index) => {
    const pinned = stress.pinFarBack && index < farBack && random.chance(0.3) ? true : row.pinned;
    if (row.message.role !== 'assistant' || index >= rows.length - 2) return { ...row, pinned };
    const ruler = stress.rulers ? [{ type: 'text', text: '='.repeat(random.int(200, 4000)) }] : [];
    if (stress.heavy === 'none')
      return { ...row, pinned, message: { ...row.message, parts: [...row.message.parts, ...ruler] } };
    const extra =
      stress.heavy === 'tools'
        ? [
            {
              type: 'tool-readFile',
              toolCallId: `stress-${row.sequence}`,
              state: 'output-available',
              input: { path: `logs/${row.sequence}.txt` },
              output: bigOutput(row.sequence),
              ...(random.chance(0.3) ? { approval: { id: `stress-approval-${row.sequence}`, approved: true } } : {}),
            },
          ]
        : [{ type: 'reasoning', text: `Weighing option ${row.sequence}. `.repeat(random.int(20, 200)) }];
    return {
      ...row,
      pinned,
      message: { ...row.message, parts: [{ type: 'step-start' }, ...extra, ...row.message.parts] },
    };
  });
}

function stressCounts(conversation: GeneratedConversation, stress: Stress): GeneratedConversation {
  const random = createRandom(conversation.seed ^ 0xc0_a7);
  const rows = conversation.rows.map((row) => {
    const draw = random.next();
    // Another counter's count, larger than this counter's: the engine recounts the row, the window's size takes it.
    if (draw < stress.otherCounter)
      return { ...row, tokenCount: (row.tokenCount ?? 0) * 4, tokenCounterId: 'another-counter/model-messages-v2' };
    if (random.next() < stress.countOnly) return { ...row, partTokenCounts: null };
    return row;
  });
  return { ...conversation, rows };
}

/**
 * A generated conversation of up to 400 messages within `budget` (its model's input, drawn between the two), without
 * a summarizer, stressed as `stress` says, with the counts the store writes by `tokenCounter`.
 */
export function generateStressedConversation(
  seed: number,
  budget: [number, number],
  stress: Stress,
  tokenCounter: TokenCounter,
): GeneratedConversation {
  const generated = generateConversation(seed, { maxMessages: 400, budget });
  const stressed = { ...generated, rows: stressRows(generated.rows, stress, seed), summarizer: false };
  return stressCounts(withStoredCounts(stressed, tokenCounter), stress);
}
