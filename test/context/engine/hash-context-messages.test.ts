// hashContextMessages keeps the hash's state after the last list hashed from each first message, and hashes only
// what a list adds to it. Over random sequences of lists drawn from one pool of message objects (extensions, cuts,
// other orders, the same list again, lists sharing a first message and then diverging), every hash must equal the
// SHA-256 of `[` + each message's canonical JSON joined by commas + `]`, computed from scratch.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/context/engine/canonical-json.js';
import { hashContextMessages } from '../../../src/context/engine/hash-context-messages.js';

const fromScratch = (messages: readonly ModelMessage[]) =>
  createHash('sha256')
    .update(`[${messages.map((message) => canonicalJson(message)).join(',')}]`)
    .digest('hex');

describe('hashContextMessages', () => {
  it('should hash every list as from scratch, whatever lists were hashed before from the same messages', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40_000 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.array(fc.nat(11), { maxLength: 14 }), { minLength: 1, maxLength: 10 }),
        (texts, lists) => {
          const pool: ModelMessage[] = texts.map((text, index) =>
            index % 2 === 0
              ? { role: 'user', content: text }
              : { role: 'assistant', content: [{ type: 'text', text }] },
          );
          let previous: ModelMessage[] = [];
          for (const [round, picks] of lists.entries()) {
            // Every other round extends the previous list, as the next request of a thread does.
            const chosen = picks.map((pick) => pool[pick % pool.length]!);
            const list = round % 2 === 1 ? [...previous, ...chosen] : chosen;
            expect(hashContextMessages(list)).toBe(fromScratch(list));
            previous = list;
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('should hash the empty list as []', () => {
    expect(hashContextMessages([])).toBe(createHash('sha256').update('[]').digest('hex'));
  });
});
