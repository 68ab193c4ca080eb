/** Resuming an answer in progress from its chunk log, in any process. */
export {
  resumeChatStream,
  RESUME_GAP_ERROR,
  type ResumeChatStreamOptions,
  type ResumedChatStream,
} from './resume-chat-stream.js';
