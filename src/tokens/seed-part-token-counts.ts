import type { ModelMessage } from 'ai';
import { messageTallyMemo, partTallyMemo, type TokenTally } from './count-message-tokens.js';
import type { TokenCounter } from './token-counter.js';

/**
 * Seeds the per-part memo of `countModelPartTokens` with stored per-part text counts, in the order
 * {@link flattenModelParts} lists the parts, so that pruning a stored message subtracts its parts without
 * tokenizing them (and `countModelMessageTokens` sums them for a message whose parts are all seeded). A string
 * content is seeded in the per-message memo. Parts that may hold images or files are left to be counted (they are
 * priced from the part, not the stored text). Returns false, seeding nothing, when `counts` does not fit the
 * messages (another length, or a value that is not a non-negative integer).
 */
export function seedPartTokenCounts(
  messages: readonly ModelMessage[],
  counts: readonly number[],
  tokenCounter: TokenCounter,
): boolean {
  let length = 0;
  for (const message of messages) length += typeof message.content === 'string' ? 1 : message.content.length;
  if (length !== counts.length) return false;
  for (const count of counts) if (!Number.isSafeInteger(count) || count < 0) return false;
  const memo = partTallyMemo(tokenCounter);
  let index = 0;
  for (const message of messages) {
    if (typeof message.content === 'string') {
      const messageMemo = messageTallyMemo(tokenCounter);
      if (!messageMemo.has(message)) messageMemo.set(message, tally(counts[index]!, 1));
      index += 1;
      continue;
    }
    for (const part of message.content) {
      const count = counts[index++]!;
      // A part the memo holds was counted or seeded before: its count stays.
      if (!mayHoldAttachments(part) && !memo.has(part)) memo.set(part, tally(count, 0));
    }
  }
  return true;
}

// Tallies are frozen values: parts with the same count share one (most counts are small), so seeding a long thread
// allocates and freezes a tally per distinct count rather than per part.
const sharedTallies: Array<Array<Readonly<TokenTally>>> = [[], []];
function tally(text: number, messages: 0 | 1): Readonly<TokenTally> {
  if (text >= 4096) return Object.freeze({ text, images: 0, files: 0, messages });
  return (sharedTallies[messages]![text] ??= Object.freeze({ text, images: 0, files: 0, messages }));
}

/** The content parts of messages in order; a string content is one entry (null). */
export function flattenModelParts(messages: readonly ModelMessage[]): Array<object | null> {
  const parts: Array<object | null> = [];
  for (const message of messages)
    if (typeof message.content === 'string') parts.push(null);
    else for (const part of message.content) parts.push(part);
  return parts;
}

function mayHoldAttachments(part: { type: string; output?: unknown }): boolean {
  if (part.type === 'tool-result') return (part.output as { type?: string } | undefined)?.type === 'content';
  return (
    part.type !== 'text' &&
    part.type !== 'reasoning' &&
    part.type !== 'tool-call' &&
    !part.type.startsWith('tool-approval')
  );
}
