import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { isUuid } from '../../errors/assert-input.js';

// Fixed namespaces for name-based (version 5) thread ids: changing one would orphan every chat a client started.
const CHAT_ID_NAMESPACE = Buffer.from('4d1c3b7e9a2f4e0c8b5d6a7f1e2c3d4b', 'hex');
const USER_CHAT_ID_NAMESPACE = Buffer.from('9b2e6c1d4f8a4b3e9c7d2a5f6e1b8c0d', 'hex');

/** Whether `threadId` is a name-based (version 5) uuid: what {@link chatThreadId} maps a chat id that is not a uuid to. */
export function isNameBasedUuid(threadId: string): boolean {
  return isUuid(threadId) && threadId[14] === '5';
}

/**
 * The thread id of a chat id made by the client: a uuid (the chatbot template's `generateUUID()`) is the thread id
 * itself, lower-cased; any other id (useChat's default `generateId()`, 1 to 200 characters) maps to a name-based
 * uuid (version 5), so that the same client id always reaches the same thread without a lookup table. With a
 * `userId`, such an id maps within that user's own namespace: two users' `support` are two threads, so no user can
 * claim an id before its owner or learn whether another user has used it (a version 5 uuid sent as the chat id never
 * creates a thread: it may be what another user's id maps to). Ownership is checked on the thread, not here.
 *
 * @throws {InvalidArgumentError} `chatId` is not a string of 1 to 200 characters, or `userId` is not a string.
 * @example
 * chatThreadId('Vd2Lq8sYx1pT0aZc'); // always the same uuid
 * chatThreadId('support', { userId: session.user.id }); // that user's own `support` thread
 */
export function chatThreadId(chatId: string, { userId }: { userId?: string | null } = {}): string {
  if (typeof chatId !== 'string' || chatId.length === 0 || chatId.length > 200 || !chatId.isWellFormed()) {
    throw new InvalidArgumentError({
      argument: 'threadId',
      value: chatId,
      message: 'expected a chat id of 1 to 200 characters, without lone surrogates.',
    });
  }
  // Lone surrogates would all hash as U+FFFD: two users would share a namespace.
  if (userId !== undefined && userId !== null && (typeof userId !== 'string' || !userId.isWellFormed())) {
    throw new InvalidArgumentError({
      argument: 'userId',
      value: userId,
      message: 'expected a string without lone surrogates, or null.',
    });
  }
  if (isUuid(chatId)) return chatId.toLowerCase();
  const hash = createHash('sha1');
  // Length-prefixed: no (user, chat id) pair shares a name with another.
  if (userId) hash.update(USER_CHAT_ID_NAMESPACE).update(`${userId.length}:${userId}${chatId}`, 'utf8');
  else hash.update(CHAT_ID_NAMESPACE).update(chatId, 'utf8');
  const bytes = hash.digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
