// hashContextMessages keeps the hash's state at points along the last list hashed from each first message, and
// hashes only from the last point a new list shares with it. Over random sequences of lists drawn from one pool of
// message objects (extensions, cuts, other orders, the same list again, lists sharing a beginning and then diverging
// anywhere, as when an older turn's tool traffic is pruned), every hash must equal the
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
        // Short texts and long ones (up to 40,000 characters), so that lists pass the points kept every 16 KB.
        fc.array(
          fc.oneof(
            fc.string({ maxLength: 40 }),
            fc
              .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.nat(5_000))
              .map(([text, times]) => text.repeat(times)),
          ),
          { minLength: 1, maxLength: 12 },
        ),
        fc.array(fc.array(fc.nat(11), { maxLength: 14 }), { minLength: 1, maxLength: 10 }),
        (texts, lists) => {
          const pool: ModelMessage[] = texts.map((text, index) =>
            index % 2 === 0
              ? { role: 'user', content: text }
              : { role: 'assistant', content: [{ type: 'text', text }] },
          );
          let previous: ModelMessage[] = [];
          for (const [round, picks] of lists.entries()) {
            // One round in three extends the previous list, as the next request of a thread does; one keeps a part
            // of its beginning and goes on differently, as one whose older turn was just pruned does.
            const chosen = picks.map((pick) => pool[pick % pool.length]!);
            const kept = previous.slice(0, Math.floor((previous.length * (picks[0] ?? 0)) / 11));
            const list = round % 3 === 1 ? [...previous, ...chosen] : round % 3 === 2 ? [...kept, ...chosen] : chosen;
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
