import type { UIMessage } from 'ai';
import type { StoredMessage } from '../../model/stored-rows.js';
import { chatThreadId, isNameBasedUuid } from './chat-thread-id.js';
import { ensureChatThread } from './ensure-chat-thread.js';
import type { ChatThreadSettings } from './chat-thread-settings.js';
import type { StreamChatTurnOptions } from '../chat-turn/chat-turn-options.js';
import { messageText } from '../titles/message-text.js';
import { titleThread } from '../titles/title-thread.js';
import type { ChatSchemas } from '../ui-messages/validate-chat-messages.js';

/** Input of {@link openChatThread} (internal): the turn's options, the trigger with its default applied. */
export interface OpenChatThreadInput<UI_MESSAGE extends UIMessage>
  extends
    ChatThreadSettings,
    ChatSchemas<UI_MESSAGE>,
    Pick<
      StreamChatTurnOptions<UI_MESSAGE>,
      'history' | 'threadId' | 'userId' | 'messageId' | 'message' | 'onPersistError'
    >,
    Required<Pick<StreamChatTurnOptions<UI_MESSAGE>, 'trigger'>> {}

/** The turn's thread id, and what to do once the answer is stored. */
export interface OpenedChatThread {
  /** The thread id (the client's chat id mapped by `chatThreadId`). */
  threadId: string;
  /** Titles the thread if this was its first exchange; settles with the title written, or null. Never rejects. */
  titleAfter(userMessage: UIMessage, contextLength: number, done: Promise<StoredMessage>): Promise<string | null>;
}

/** Maps the chat id, checks ownership and creates the thread when asked, before the turn is planned. */
export async function openChatThread<UI_MESSAGE extends UIMessage>(
  input: OpenChatThreadInput<UI_MESSAGE>,
): Promise<OpenedChatThread> {
  const { generateTitle, userId, history } = input;
  const threadId = chatThreadId(input.threadId, { userId: userId ?? history.userId });
  // A name-based uuid from the client may be what another user's chat id maps to: it reaches a thread that exists,
  // but creates none, so no one can take another user's id before them or tell whether they used it.
  const createThreads = isNameBasedUuid(input.threadId) ? 'never' : (input.createThreads ?? 'never');
  const needsThread = createThreads !== 'never' || userId !== undefined || generateTitle !== undefined;
  const ensured = needsThread ? await ensureChatThread({ ...input, threadId, createThreads }) : undefined;
  const onPersistError =
    input.onPersistError ?? ((error) => console.error('agent-history: could not title the thread', error));
  return {
    threadId,
    titleAfter: async (userMessage, contextLength, done) => {
      if (!generateTitle || !ensured || ensured.thread.title !== null || contextLength !== 1) return null;
      try {
        const answer = await done;
        if (answer.status !== 'completed') return null;
        const input = { userText: messageText(userMessage), answerText: messageText(answer.message) };
        return await titleThread(history, threadId, generateTitle, input, [userMessage.id, answer.message.id]);
      } catch (error) {
        onPersistError(error);
        return null;
      }
    },
  };
}
