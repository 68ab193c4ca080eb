import type { UIMessage } from 'ai';
import type { MessageCheck } from '../../store/message-check.js';
import { validateChatMessages, type ChatSchemas } from './validate-chat-messages.js';

/**
 * The store's `checkMessage` from the chat route's schemas: every message part the store writes (append,
 * checkpoint, finalize, reopen) is validated with `validateUIMessages` and these schemas, so the store and the
 * route refuse the same messages. A checkpoint, finalization or reopening that leaves the metadata unchanged skips
 * `metadataSchema`; an append without metadata is checked as the route checks it (metadata `undefined`).
 *
 * @example
 * const history = createAgentHistory({ db, checkMessage: chatMessageCheck({ tools, metadataSchema }) });
 */
export function chatMessageCheck<UI_MESSAGE extends UIMessage>(schemas: ChatSchemas<UI_MESSAGE>): MessageCheck {
  return async (message, write) => {
    const unchanged = message.metadata === undefined && write !== 'append';
    const metadataSchema = unchanged ? undefined : schemas.metadataSchema;
    await validateChatMessages<UI_MESSAGE>([message], { ...schemas, metadataSchema }, 'message');
  };
}
