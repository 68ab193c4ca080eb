/** The answer's UI message stream, which persists the answer as it streams. */
export {
  persistUIMessageStream,
  type PersistedUIMessageStream,
  type PersistUIMessageStreamOptions,
} from './persist-ui-message-stream.js';
export type { DisconnectBehavior } from './disconnect-behavior.js';
