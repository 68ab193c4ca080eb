import type { ContextMessage } from '../model/context-store.js';
import type { MemoryContextState } from './memory-context-state.js';

// Words too common to make a message relevant (the search is a plain word match, enough for tests and demos).
const stopWords = new Set([
  'the',
  'and',
  'for',
  'our',
  'you',
  'your',
  'what',
  'how',
  'from',
  'with',
  'that',
  'this',
  'are',
  'was',
  'were',
  'has',
  'have',
  'not',
  'but',
  'can',
  'should',
  'would',
  'about',
]);

/** Options of {@link searchMemoryMessages}. */
export interface SearchMemoryMessagesOptions {
  /** The words to look for; those under three letters and common ones ("the", "what", …) are ignored. */
  query: string;
  /** The most messages returned. */
  limit: number;
}

/**
 * The in-memory memory search: the live, eligible messages whose text parts contain the most of the query's words
 * (a plain word match, enough for tests and demos), best first, newest first among equals; copies.
 */
export async function searchMemoryMessages(
  state: MemoryContextState,
  { query, limit }: SearchMemoryMessagesOptions,
): Promise<ContextMessage[]> {
  await Promise.resolve();
  return scoreMemoryMessages(state.messages, query)
    .slice(0, limit)
    .map((entry) => structuredClone(entry.message));
}

/**
 * The live, eligible messages whose text parts contain any of the query's words, with how many they contain and their
 * text, best first, newest first among equals (the messages themselves, not copies).
 */
export function scoreMemoryMessages(
  messages: readonly ContextMessage[],
  query: string,
): Array<{ message: ContextMessage; score: number; text: string }> {
  const words = [
    ...new Set(
      query
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter((word) => word.length >= 3 && !stopWords.has(word)),
    ),
  ];
  if (words.length === 0) return [];
  return messages
    .filter((message) => message.deletedAt === null && message.contextState === 'eligible')
    .map((message) => {
      const text = message.message.parts
        .filter((part) => part.type === 'text')
        .map((part) => String(part.text))
        .join('\n');
      const lower = text.toLowerCase();
      return { message, text, score: words.reduce((score, word) => score + (lower.includes(word) ? 1 : 0), 0) };
    })
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || b.message.sequence - a.message.sequence);
}
