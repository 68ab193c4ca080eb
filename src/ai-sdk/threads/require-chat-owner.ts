import { NotFoundError } from '../../errors/not-found-error.js';
import type { TenantHistory } from '../../store/tenant-history.js';

/**
 * The live thread, if `userId` may use it: a thread of another user is {@link NotFoundError}, like a missing one.
 * Used by the handler's `stop` and `GET`, which must not stop or replay another user's answer.
 */
export async function requireChatOwner(history: TenantHistory, threadId: string, userId: string | undefined) {
  const thread = await history.getThread(threadId);
  if (userId !== undefined && thread.userId !== null && thread.userId !== userId)
    throw new NotFoundError({ entity: 'thread', id: threadId });
  return thread;
}
