/** UI messages: mapping them to stored rows and back, validating and screening them, loading a thread's page. */
export { fromUIMessage, toUIMessage } from './ui-message-mapping.js';
export { validateChatMessages, type ChatSchemas } from './validate-chat-messages.js';
export { chatMessageCheck } from './chat-message-check.js';
export type { FileUrlAllowlist } from './file-url-allowlist.js';
export type { IncomingMessagePolicy } from './screen-incoming-message.js';
export {
  loadThreadPage,
  type LoadThreadPageOptions,
  type UIMessagePage,
  type UIMessagePageEntry,
} from './load-thread-page.js';
