import { createUIMessageStreamResponse, type UIMessage, type UIMessageChunk } from 'ai';
import type { StoredMessage } from '../../model/stored-rows.js';
import type { ChatTurn } from '../chat-turn/chat-turn.js';

/**
 * The turn of a request that only stored approval responses (another approval of the answer is unanswered): its
 * stream starts and finishes the same message without new parts; `runId` is empty (no model was called).
 */
export function recordedApprovalTurn<UI_MESSAGE extends UIMessage>(
  threadId: string,
  userMessageId: string,
  stored: StoredMessage,
): ChatTurn<UI_MESSAGE> {
  const assistantMessageId = stored.message.id;
  const chunks: UIMessageChunk[] = [{ type: 'start', messageId: assistantMessageId }, { type: 'finish' }];
  const first = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return {
    threadId,
    runId: '',
    userMessageId,
    assistantMessageId,
    excludedMessageIds: [],
    stream: first as ChatTurn<UI_MESSAGE>['stream'],
    done: Promise.resolve(stored),
    title: Promise.resolve(null),
    toResponse: (init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('x-agent-history-thread-id', threadId);
      headers.set('x-agent-history-user-message-id', userMessageId);
      headers.set('x-agent-history-message-id', assistantMessageId);
      return createUIMessageStreamResponse({ ...init, headers, stream: first });
    },
  };
}
