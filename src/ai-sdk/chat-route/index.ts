/** The chat route: request handlers for `useChat` (answer, stop, resume) and their error responses. */
export { createChatHandler } from './create-chat-handler.js';
export type { CreateChatHandlerOptions } from './create-chat-handler-options.js';
export type { ChatRequestBody, ChatRequestContext } from './chat-request.js';
export { parseChatRequest } from './parse-chat-request.js';
export { resumeChatRequest, type ResumeChatRequestOptions, type ResumeRouteContext } from './resume-chat-request.js';
export { chatErrorResponse, chatErrorStatus, type ChatErrorBody } from './chat-error-response.js';
export { ChatBodyTooLargeError } from './chat-body-too-large-error.js';
