import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { countModelPartTokens, type TokenTally } from '../../tokens/count-message-tokens.js';

// Up to this many parts on a side, the parts are compared in arrays (no Set or Map is built): a pruned message
// has a handful of parts, and the retally runs once per pruned or previewed segment.
const SMALL = 16;

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
  // A message in both is unchanged: its parts cancel out. A string content stands for itself (by its text).
  const large = before.length > SMALL || after.length > SMALL;
  const keptAfter = large ? new Set<ModelMessage>(after) : undefined;
  const keptBefore = large ? new Set<ModelMessage>(before) : undefined;
  const removed: unknown[] = [];
  const added: unknown[] = [];
  for (const message of before)
    if (!(keptAfter ? keptAfter.has(message) : after.includes(message))) collectParts(message, removed);
  for (const message of after)
    if (!(keptBefore ? keptBefore.has(message) : before.includes(message))) collectParts(message, added);
  const result = { ...tally, messages: tally.messages - before.length + after.length };
  if (removed.length > SMALL || added.length > SMALL) {
    // Many parts: compared in sets, each part once.
    const inRemoved = new Set(removed);
    const inAdded = new Set(added);
    for (const part of inRemoved) if (!inAdded.has(part)) apply(result, part, -1, measure);
    for (const part of inAdded) if (!inRemoved.has(part)) apply(result, part, 1, measure);
  } else {
    removed.forEach((part, index) => {
      if (!added.includes(part) && !listedEarlier(removed, index)) apply(result, part, -1, measure);
    });
    added.forEach((part, index) => {
      if (!removed.includes(part) && !listedEarlier(added, index)) apply(result, part, 1, measure);
    });
  }
  // A stored count below the true one could go negative; a tally never does.
  return {
    text: Math.max(0, result.text),
    images: Math.max(0, result.images),
    files: Math.max(0, result.files),
    messages: Math.max(0, result.messages),
  };
}

// The parts of a message, by object; a string content as its text (the same text cancels out).
function collectParts(message: ModelMessage, into: unknown[]): void {
  if (typeof message.content === 'string') into.push(message.content);
  else for (const part of message.content) into.push(part);
}

// A part listed twice (the same object, or the same string content) counts once.
function listedEarlier(list: readonly unknown[], index: number): boolean {
  for (let earlier = 0; earlier < index; earlier++) if (list[earlier] === list[index]) return true;
  return false;
}

function apply(result: TokenTally, part: unknown, sign: number, measure: ContextMeasure): void {
  const counted =
    typeof part === 'string'
      ? { text: measure.tokenCounter.count(part), images: 0, files: 0 }
      : countModelPartTokens(part as object, measure.tokenCounter);
  result.text += sign * counted.text;
  result.images += sign * counted.images;
  result.files += sign * counted.files;
}
