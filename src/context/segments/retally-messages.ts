import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { countModelPartTokens, type TokenTally } from '../../tokens/count-message-tokens.js';

/**
 * The tally of `after`, derived from the tally of `before` ({@link withMessages}): minus the parts only `before`
 * has, plus the parts only `after` has (by object; a string content by its text), with one message of framing
 * per message. Clamped at 0 (a stored count below the true one).
 */
export function retallyMessages(
  before: readonly ModelMessage[],
  tally: TokenTally,
  after: readonly ModelMessage[],
  measure: ContextMeasure,
): TokenTally {
  const kept = new Set<ModelMessage>(after);
  const unchanged = new Set(before.filter((message) => kept.has(message)));
  const strings = new Map<string, { stringContent: string }>();
  const removed = partsOf(
    before.filter((message) => !unchanged.has(message)),
    strings,
  );
  const added = partsOf(
    after.filter((message) => !unchanged.has(message)),
    strings,
  );
  const result = { ...tally, messages: tally.messages - before.length + after.length };
  const apply = (part: object, sign: number) => {
    const counted =
      typeof part === 'object' && 'stringContent' in part
        ? { text: measure.tokenCounter.count((part as { stringContent: string }).stringContent), images: 0, files: 0 }
        : countModelPartTokens(part, measure.tokenCounter);
    result.text += sign * counted.text;
    result.images += sign * counted.images;
    result.files += sign * counted.files;
  };
  for (const part of removed) if (!added.has(part)) apply(part, -1);
  for (const part of added) if (!removed.has(part)) apply(part, 1);
  // A stored count below the true one could go negative; a tally never does.
  return {
    text: Math.max(0, result.text),
    images: Math.max(0, result.images),
    files: Math.max(0, result.files),
    messages: Math.max(0, result.messages),
  };
}

// The parts of messages, by object; a string content counts as one text part, the same wrapper for the same
// text, so a message whose string content is kept cancels out.
function partsOf(messages: readonly ModelMessage[], strings: Map<string, { stringContent: string }>): Set<object> {
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
}
