import { countStoredMessageTokens, storedTokenCountId } from '../tokens/count-stored-message-tokens.js';
import type { ContextUIMessage } from '../model/context-ui-message.js';
import type { StoredMessagePart } from '../schema/define-agent-tables.js';
import type { StoreContext } from './store-context.js';

/**
 * The token count stored with a message at write time: exactly what the context engine would count for it
 * (its model messages' text, no factors), with the engine's counter id, so the engine sums stored counts instead
 * of re-tokenizing the thread on every step.
 */
export async function storedTokenCount(
  context: StoreContext,
  message: { id: string; role: 'system' | 'user' | 'assistant'; parts: StoredMessagePart[] },
): Promise<{ tokenCount: number; tokenCounterId: string }> {
  const tokenCounter = await context.tokenCounter;
  return {
    tokenCount: countStoredMessageTokens({ message: message as ContextUIMessage, tokenCounter }),
    tokenCounterId: storedTokenCountId(tokenCounter),
  };
}
