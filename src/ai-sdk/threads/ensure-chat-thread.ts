import type { UIMessage } from 'ai';
import { DatabaseError } from '../../errors/database-error.js';
import { InvalidMessageError } from '../../errors/invalid-message-error.js';
import { NotFoundError } from '../../errors/not-found-error.js';
import type { StoredThread } from '../../model/stored-rows.js';
import type { StreamChatTurnOptions } from '../chat-turn/chat-turn-options.js';
import { validateChatMessages, type ChatSchemas } from '../ui-messages/validate-chat-messages.js';

/**
 * Input of {@link ensureChatThread} (internal: `streamChatTurn` builds it from its options). The incoming `message` is
 * validated before the thread is created, so that bad input writes nothing; only a submitted message (not an edit,
 * not a regeneration) creates a thread.
 */
export interface EnsureChatThreadInput<UI_MESSAGE extends UIMessage>
  extends
    ChatSchemas<UI_MESSAGE>,
    Pick<StreamChatTurnOptions<UI_MESSAGE>, 'history' | 'userId' | 'messageId' | 'message'>,
    Required<Pick<StreamChatTurnOptions<UI_MESSAGE>, 'trigger' | 'createThreads'>> {
  /** The thread id (already mapped from the client's chat id). */
  threadId: string;
}

/** The turn's thread, and whether this turn created it. */
export interface EnsuredChatThread {
  /** The thread as read (or created). */
  thread: StoredThread;
  /** Whether this request created the thread. */
  created: boolean;
}

/**
 * The turn's thread, created on the first message when allowed. Two first messages racing on the same id make one
 * thread: the loser's insert fails on the primary key and it reads the winner's thread. A thread owned by another
 * user is {@link NotFoundError}, like a missing one; a thread without an owner is the tenant's and is not refused.
 */
export async function ensureChatThread<UI_MESSAGE extends UIMessage>(
  input: EnsureChatThreadInput<UI_MESSAGE>,
): Promise<EnsuredChatThread> {
  const { history, threadId, userId } = input;
  const owned = (thread: StoredThread) => {
    if (userId !== undefined && thread.userId !== null && thread.userId !== userId)
      throw new NotFoundError({ entity: 'thread', id: threadId });
    return thread;
  };
  const existing = await history.getThread(threadId).catch((error: unknown) => {
    if (error instanceof NotFoundError && mayCreate(input)) return null;
    throw error;
  });
  if (existing) return { thread: owned(existing), created: false };

  await validateFirstMessage(input);
  try {
    return { thread: await history.createThread({ id: threadId, userId }), created: true };
  } catch (error) {
    if (!(error instanceof DatabaseError && error.databaseCode === '23505')) throw error;
    // A racing first message (or a retry) created it, or it was soft-deleted: getThread tells which.
    return { thread: owned(await history.getThread(threadId)), created: false };
  }
}

function mayCreate(input: EnsureChatThreadInput<UIMessage>): boolean {
  return (
    input.createThreads === 'on-first-message' && input.trigger === 'submit-message' && input.messageId === undefined
  );
}

async function validateFirstMessage<UI_MESSAGE extends UIMessage>(input: EnsureChatThreadInput<UI_MESSAGE>) {
  const { message } = input;
  if (typeof message !== 'object' || message === null)
    throw new InvalidMessageError({ path: 'message', value: message, message: 'expected the new user message.' });
  const role = (message as { role?: unknown }).role;
  if (role !== 'user')
    throw new InvalidMessageError({ path: 'message.role', value: role, message: 'a chat starts with a user message.' });
  await validateChatMessages<UI_MESSAGE>([message], input, 'message');
}
