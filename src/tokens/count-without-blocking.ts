import { nextTurn, YIELD_AFTER_MS } from './piece-counter.js';
import type { TokenCounter } from './token-counter.js';

/**
 * Runs `countAll` (synchronous counting of many texts, such as a message's parts) without holding the event loop
 * for long: the texts it asks of `counter` are first gathered by a pass that counts nothing, then counted through
 * `counter.countAsync` with a turn of the event loop every few milliseconds, and `countAll` runs again on the
 * counts found. A counter without `countAsync` is used as it is.
 *
 * @example
 * const parts = await countWithoutBlocking(counter, (each) => countStoredPartTokens({ message, tokenCounter: each }));
 */
export async function countWithoutBlocking<RESULT>(
  counter: TokenCounter,
  countAll: (counter: TokenCounter) => RESULT,
): Promise<RESULT> {
  const countAsync = counter.countAsync?.bind(counter);
  if (!countAsync) return countAll(counter);
  const texts = new Set<string>();
  // Another id: what the context engine remembers per counter id (part tallies) must not see these zeros.
  countAll({
    id: `${counter.id}\u0000gathering`,
    count: (text) => {
      texts.add(text);
      return 0;
    },
  });
  const counted = new Map<string, number>();
  let computingSince = performance.now();
  for (const text of texts) {
    counted.set(text, await countAsync(text));
    if (performance.now() - computingSince < YIELD_AFTER_MS) continue;
    await nextTurn();
    computingSince = performance.now();
  }
  return countAll({ id: counter.id, count: (text) => counted.get(text) ?? counter.count(text) });
}
