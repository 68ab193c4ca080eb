// retallyMessages compares parts in arrays when there are few; the reference below is the set-based form it
// replaced. Over generated messages and edits (messages kept, dropped, rebuilt with parts removed, replaced or
// added, string contents kept or changed, parts listed twice, many parts), both give the same tally from any
// starting tally, including ones a stored count left too low.
import type { ModelMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { retallyMessages } from '../../../src/context/segments/retally-messages.js';
import type { ContextMeasure } from '../../../src/tokens/context-measure.js';
import { countModelPartTokens, type TokenTally } from '../../../src/tokens/count-message-tokens.js';
import { smallMeasure } from '../fixtures.js';

function referenceRetally(
  before: readonly ModelMessage[],
  tally: TokenTally,
  after: readonly ModelMessage[],
  measure: ContextMeasure,
): TokenTally {
  const kept = new Set<ModelMessage>(after);
  const unchanged = new Set(before.filter((message) => kept.has(message)));
  const strings = new Map<string, { stringContent: string }>();
  const partsOf = (messages: readonly ModelMessage[]) => {
    const parts = new Set<object>();
    for (const message of messages) {
      if (typeof message.content !== 'string') for (const part of message.content) parts.add(part);
      else {
        let part = strings.get(message.content);
        if (!part) strings.set(message.content, (part = { stringContent: message.content }));
        parts.add(part);
      }
    }
    return parts;
  };
  const removed = partsOf(before.filter((message) => !unchanged.has(message)));
  const added = partsOf(after.filter((message) => !unchanged.has(message)));
  const result = { ...tally, messages: tally.messages - before.length + after.length };
  const apply = (part: object, sign: number) => {
    const counted =
      'stringContent' in part
        ? { text: measure.tokenCounter.count((part as { stringContent: string }).stringContent), images: 0, files: 0 }
        : countModelPartTokens(part, measure.tokenCounter);
    result.text += sign * counted.text;
    result.images += sign * counted.images;
    result.files += sign * counted.files;
  };
  for (const part of removed) if (!added.has(part)) apply(part, -1);
  for (const part of added) if (!removed.has(part)) apply(part, 1);
  return {
    text: Math.max(0, result.text),
    images: Math.max(0, result.images),
    files: Math.max(0, result.files),
    messages: Math.max(0, result.messages),
  };
}

const measure = smallMeasure();
const word = fc.constantFrom('alpha', 'beta', 'gamma delta', '数据', 'x');
const part = fc.oneof(
  word.map((text) => ({ type: 'text' as const, text })),
  word.map((text) => ({ type: 'reasoning' as const, text })),
  fc.record({ id: fc.nat(50), word }).map(({ id, word: query }) => ({
    type: 'tool-call' as const,
    toolCallId: `call-${id}`,
    toolName: 'search',
    input: { query },
  })),
  fc.constant({ type: 'file' as const, data: new URL('https://example.com/a.png'), mediaType: 'image/png' }),
);
const message = fc.oneof(
  fc.array(part, { maxLength: 24 }).map((content): ModelMessage => ({ role: 'assistant', content })),
  word.map((content): ModelMessage => ({ role: 'user', content })),
);

// An edit of `before`: each message kept, dropped, or rebuilt from some of its parts (some listed twice) and new
// ones; new messages added; the order shuffled by the seed.
const edit = fc
  .record({
    before: fc.array(message, { maxLength: 20 }),
    choices: fc.array(fc.nat(5), { maxLength: 40 }),
    fresh: fc.array(message, { maxLength: 20 }),
    tally: fc.record({ text: fc.nat(400), images: fc.nat(3), files: fc.nat(3), messages: fc.nat(25) }),
  })
  .map(({ before, choices, fresh, tally }) => {
    const choice = (index: number) => choices[index % Math.max(1, choices.length)] ?? 0;
    const after: ModelMessage[] = [];
    before.forEach((item, index) => {
      const pick = choice(index);
      if (pick === 0 || pick === 1) after.push(item);
      else if (pick === 2 && typeof item.content !== 'string')
        after.push({
          ...item,
          content: [...item.content.filter((_part, at) => at % 2 === 0), ...item.content.slice(0, 2)],
        } as ModelMessage);
      else if (pick === 3) after.push({ ...item } as ModelMessage);
      else if (pick === 4 && typeof item.content !== 'string' && Array.isArray(fresh[index]?.content))
        after.push({ ...item, content: [...item.content.slice(1), ...(fresh[index]!.content as [])] } as ModelMessage);
    });
    after.push(...fresh.slice(0, choice(before.length)));
    return { before, after, tally };
  });

describe('retallyMessages', () => {
  it('should give the tally the set-based reference gives, for any edit and starting tally', () => {
    fc.assert(
      fc.property(edit, ({ before, after, tally }) => {
        expect(retallyMessages(before, tally, after, measure)).toEqual(referenceRetally(before, tally, after, measure));
        expect(retallyMessages(after, tally, before, measure)).toEqual(referenceRetally(after, tally, before, measure));
      }),
      { numRuns: 1_000 },
    );
  });
});
