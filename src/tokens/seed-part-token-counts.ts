import type { ModelMessage } from 'ai';
import { messageTallyMemo, partTallyMemo } from './count-message-tokens.js';
import type { TokenCounter } from './token-counter.js';

/**
 * Seeds the per-part memo of `countModelPartTokens` (and the per-message memo of `countModelMessageTokens`)
 * with stored per-part text counts, in the order {@link flattenModelParts} lists the parts, so that pruning a stored
 * message subtracts its parts without tokenizing them. Parts that may hold images or files are left to be counted
 * (they are priced from the part, not the stored text). Returns false, seeding nothing, when `counts` does not fit
 * the messages (another length, or a value that is not a non-negative integer).
 */
export function seedPartTokenCounts(
  messages: readonly ModelMessage[],
  counts: readonly number[],
  tokenCounter: TokenCounter,
): boolean {
  const parts = flattenModelParts(messages);
  if (parts.length !== counts.length || !counts.every((count) => Number.isSafeInteger(count) && count >= 0))
    return false;
  const memo = partTallyMemo(tokenCounter);
  const messageMemoOfCounter = messageTallyMemo(tokenCounter);
  let index = 0;
  for (const message of messages) {
    let text = 0;
    let plain = true;
    for (const part of typeof message.content === 'string' ? [null] : message.content) {
      const count = counts[index++]!;
      text += count;
      if (part === null) continue;
      if (mayHoldAttachments(part)) plain = false;
      else if (!memo.has(part)) memo.set(part, Object.freeze({ text: count, images: 0, files: 0, messages: 0 }));
    }
    if (plain && !messageMemoOfCounter.has(message))
      messageMemoOfCounter.set(message, Object.freeze({ text, images: 0, files: 0, messages: 1 }));
  }
  return true;
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
