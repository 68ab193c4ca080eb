// Stored token counts for generated conversations (test/support/agent-conversations.ts), as the store writes them
// when it appends a message: the message's count and its per-part counts, with the counter's id. Some rows are
// left as old rows would be (a count without per-part counts, or no count at all), so both fallbacks run too.
import { countStoredPartTokens, storedTokenCountId } from '../../src/context/index.js';
import type { ContextMessage } from '../../src/model/context-store.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { createRandom, type GeneratedConversation } from './agent-conversations.js';

/**
 * The conversation with stored counts on its rows: about 85 % with per-part counts, 10 % with the message's count
 * only, 5 % uncounted (seeded apart from the generator, so the conversation itself is the same).
 */
export function withStoredCounts(
  conversation: GeneratedConversation,
  tokenCounter: TokenCounter,
): GeneratedConversation {
  const random = createRandom(conversation.seed ^ 0x5eed_c0de);
  const tokenCounterId = storedTokenCountId(tokenCounter);
  const rows = conversation.rows.map((row): ContextMessage => {
    const draw = random.next();
    if (draw < 0.05) return row;
    const partTokenCounts = countStoredPartTokens({ message: row.message, tokenCounter });
    const tokenCount = partTokenCounts.reduce((sum, count) => sum + count, 0);
    return { ...row, tokenCount, tokenCounterId, partTokenCounts: draw < 0.15 ? null : partTokenCounts };
  });
  return { ...conversation, rows };
}

/**
 * The counter with every count remembered by text (a generated conversation repeats its sentences and payloads):
 * the same counts and id, so stored counts made with one are used by the other.
 */
export function rememberingTokenCounter(tokenCounter: TokenCounter): TokenCounter {
  const counts = new Map<string, number>();
  let characters = 0;
  return {
    id: tokenCounter.id,
    count(text) {
      let count = counts.get(text);
      if (count === undefined) {
        count = tokenCounter.count(text);
        // Bounded in characters: a large tool output's JSON is a new string on every call.
        if (characters > 50_000_000) {
          counts.clear();
          characters = 0;
        }
        characters += text.length;
        counts.set(text, count);
      }
      return count;
    },
  };
}
