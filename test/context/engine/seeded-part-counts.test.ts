// Stored per-part counts seed only the part memo; a message's count is then the sum of its seeded parts. The
// reference is what seeding gave before (the per-message memo filled at seeding): over generated conversations
// (test/support/agent-conversations.ts), with per-part counts made deliberately wrong (so a recount shows), every
// converted message counts as the old path counted it and every seeded part as its stored count.
import type { ModelMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countStoredPartTokens, type TokenTally } from '../../../src/context/index.js';
import { convertUIMessageToModelMessages } from '../../../src/tokens/convert-ui-message.js';
import { countModelMessageTokens, countModelPartTokens } from '../../../src/tokens/count-message-tokens.js';
import { seedPartTokenCounts } from '../../../src/tokens/seed-part-token-counts.js';
import { generateConversation } from '../../support/agent-conversations.js';
import { tokenCounter } from '../fixtures.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

// The parts seeding leaves to be counted: those that may hold images or files.
function mayHoldAttachments(part: { type: string; output?: unknown }): boolean {
  if (part.type === 'tool-result') return (part.output as { type?: string } | undefined)?.type === 'content';
  return (
    part.type !== 'text' &&
    part.type !== 'reasoning' &&
    part.type !== 'tool-call' &&
    !part.type.startsWith('tool-approval')
  );
}

// The old per-message seed: the sum of the stored counts for a message of plain parts (or a string), else a count.
function referenceTally(message: ModelMessage, counts: readonly number[]): TokenTally {
  const text = counts.reduce((sum, count) => sum + count, 0);
  if (typeof message.content === 'string' || !message.content.some(mayHoldAttachments))
    return { text, images: 0, files: 0, messages: 1 };
  // Counted from the parts: a copy the memo has never seen.
  const copy = { ...message, content: message.content.map((part) => ({ ...part })) } as ModelMessage;
  return countModelMessageTokens(copy, tokenCounter);
}

describe('seeded per-part counts', () => {
  it('should count every message of a generated thread as the per-message seed did, stored counts never recounted', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 7 }), (seed, skew) => {
        const { rows } = generateConversation(seed, { maxMessages: 120 });
        for (const row of rows) {
          // Off by a little, part by part: a count taken from the text instead of the memo shows.
          const counts = countStoredPartTokens({ message: row.message, tokenCounter }).map(
            (count, index) => count + ((index * skew) % 5),
          );
          const messages = convertUIMessageToModelMessages(row.message);
          expect(seedPartTokenCounts(messages, counts, tokenCounter)).toBe(true);
          let index = 0;
          for (const message of messages) {
            const size = typeof message.content === 'string' ? 1 : message.content.length;
            const own = counts.slice(index, index + size);
            expect(countModelMessageTokens(message, tokenCounter)).toEqual(referenceTally(message, own));
            if (typeof message.content !== 'string')
              message.content.forEach((part, position) => {
                if (!mayHoldAttachments(part))
                  expect(countModelPartTokens(part, tokenCounter).text).toBe(own[position]);
              });
            index += size;
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});
