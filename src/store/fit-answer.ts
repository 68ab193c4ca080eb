import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import { fitAssistantParts } from './fit-assistant-parts.js';
import type { StoreContext } from './store-context.js';

/**
 * An answer's parts made to fit its store's `maxMessageBytes`: the model wrote the message, so it is never refused
 * for its size; its largest tool payloads become previews.
 */
export function fitAnswer(
  context: StoreContext,
  threadId: string,
  messageId: string,
  parts: StoredMessagePart[],
  metadata?: StoredMetadata,
) {
  return fitAssistantParts(parts, {
    limit: context.maxMessageBytes,
    metadataBytes: Buffer.byteLength(JSON.stringify(metadata ?? {})),
    threadId,
    messageId,
    options: context.oversizedToolPayloads,
  });
}
