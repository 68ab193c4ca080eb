import type { MessagePage } from '../../src/store/list-messages.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';

// The builders every test folder uses (messages, parts, ranges). Fixtures specific to one folder stay there
// (`test/ai-sdk/fixtures.ts`: tools, scripted models, chat rows; `test/context/fixtures.ts`: stored rows, measures).

/** A text part: `{ type: 'text', text }`. */
export const text = (value: string) => ({ type: 'text' as const, text: value });

/**
 * A user message with one text part.
 *
 * @param text - what the user wrote. @default `text of ${id}`
 */
export const userMessage = (id: string, text = `text of ${id}`) => ({
  id,
  role: 'user' as const,
  parts: [{ type: 'text' as const, text }],
});

/** An assistant message with one text part. */
export const assistantMessage = (id: string, text: string) => ({
  id,
  role: 'assistant' as const,
  parts: [{ type: 'text' as const, text }],
});

/**
 * A counter (one token a character) whose `countAsync` takes 30 ms and turns of the event loop for a text over
 * 1,000 characters and answers at once for a shorter one: a long message is ready after a short one made after it.
 */
export const slowForLongTexts: TokenCounter = {
  id: 'slow-for-long-texts',
  count: (text) => text.length,
  countAsync: async (text) => {
    if (text.length > 1_000) await new Promise((resolve) => setTimeout(resolve, 30));
    return text.length;
  },
};

/** The integers from `from` through `through`, ascending (empty when `through` is below `from`). */
export const range = (from: number, through: number) =>
  Array.from({ length: Math.max(0, through - from + 1) }, (_, index) => from + index);

/**
 * What `listChatMessages` should return for the same page of `listMessages`: each stored message's `UIMessage` and
 * lifecycle fields, oldest first, and the same cursor.
 */
export const asChatWindowPage = ({ messages, nextCursor }: MessagePage) => ({
  messages: messages
    .map(({ message, sequence, status, contextState, exclusionReason, createdAt }) => ({
      message,
      sequence,
      status,
      contextState,
      exclusionReason,
      createdAt,
    }))
    .reverse(),
  nextCursor,
});
