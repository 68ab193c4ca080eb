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
  return applyTallyChange(tally, tallyChange(before, after, measure));
}

/** What {@link retallyMessages} adds to a tally: the parts only `after` has, less those only `before` has. */
export interface TallyChange {
  /** The tally of the parts that went. */
  removed: Omit<TokenTally, 'messages'>;
  /** The tally of the parts that came. */
  added: Omit<TokenTally, 'messages'>;
  /** `after.length - before.length`. */
  messages: number;
}

/** The change from `before` to `after` ({@link retallyMessages} applies it), independent of the tally it applies to. */
export function tallyChange(
  before: readonly ModelMessage[],
  after: readonly ModelMessage[],
  measure: ContextMeasure,
): TallyChange {
  // A message in both is unchanged: its parts cancel out. A string content stands for itself (by its text).
  const large = before.length > SMALL || after.length > SMALL;
  const keptAfter = large ? new Set<ModelMessage>(after) : undefined;
  const keptBefore = large ? new Set<ModelMessage>(before) : undefined;
  const removedParts: unknown[] = [];
  const addedParts: unknown[] = [];
  for (const message of before)
    if (!(keptAfter ? keptAfter.has(message) : after.includes(message))) collectParts(message, removedParts);
  for (const message of after)
    if (!(keptBefore ? keptBefore.has(message) : before.includes(message))) collectParts(message, addedParts);
  const change: TallyChange = {
    removed: { text: 0, images: 0, files: 0 },
    added: { text: 0, images: 0, files: 0 },
    messages: after.length - before.length,
  };
  if (removedParts.length > SMALL || addedParts.length > SMALL) {
    // Many parts: compared in sets, each part once.
    const inRemoved = new Set(removedParts);
    const inAdded = new Set(addedParts);
    for (const part of inRemoved) if (!inAdded.has(part)) apply(change.removed, part, measure);
    for (const part of inAdded) if (!inRemoved.has(part)) apply(change.added, part, measure);
  } else {
    removedParts.forEach((part, index) => {
      if (!addedParts.includes(part) && !listedEarlier(removedParts, index)) apply(change.removed, part, measure);
    });
    addedParts.forEach((part, index) => {
      if (!removedParts.includes(part) && !listedEarlier(addedParts, index)) apply(change.added, part, measure);
    });
  }
  return change;
}

/** `tally` changed by `change`, clamped at 0 (a stored count below the true one could go negative). */
export function applyTallyChange(tally: TokenTally, change: TallyChange): TokenTally {
  return {
    text: Math.max(0, tally.text - change.removed.text + change.added.text),
    images: Math.max(0, tally.images - change.removed.images + change.added.images),
    files: Math.max(0, tally.files - change.removed.files + change.added.files),
    messages: Math.max(0, tally.messages + change.messages),
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

function apply(into: Omit<TokenTally, 'messages'>, part: unknown, measure: ContextMeasure): void {
  const counted =
    typeof part === 'string'
      ? { text: measure.tokenCounter.count(part), images: 0, files: 0 }
      : countModelPartTokens(part as object, measure.tokenCounter);
  into.text += counted.text;
  into.images += counted.images;
  into.files += counted.files;
}
