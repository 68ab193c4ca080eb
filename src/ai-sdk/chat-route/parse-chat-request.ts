import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { assertJsonDepth } from '../../store/validate-message.js';
import type { ChatRequestBody } from './chat-request.js';

/** Reads a chat request body: ours, or useChat's default one (the last of `messages` is the new message). */
export function parseChatRequest(body: unknown): ChatRequestBody {
  if (typeof body !== 'object' || body === null)
    throw new InvalidArgumentError({ argument: 'body', value: body, message: 'expected a JSON object.' });
  const raw = body as Record<string, unknown>;
  const threadId = raw.threadId ?? raw.id;
  if (typeof threadId !== 'string')
    throw new InvalidArgumentError({ argument: 'threadId', value: threadId, message: 'expected a thread id.' });
  const trigger = raw.trigger ?? 'submit-message';
  if (trigger !== 'submit-message' && trigger !== 'regenerate-message') {
    throw new InvalidArgumentError({
      argument: 'trigger',
      value: trigger,
      message: 'expected submit-message or regenerate-message.',
    });
  }
  const optionalString = (name: string) => {
    const value = raw[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string')
      throw new InvalidArgumentError({ argument: name, value, message: 'expected a string.' });
    return value;
  };
  const message =
    raw.message ?? (Array.isArray(raw.messages) && trigger === 'submit-message' ? raw.messages.at(-1) : undefined);
  assertJsonDepth(message, 'message');
  return { threadId, trigger, message, messageId: optionalString('messageId'), requestId: optionalString('requestId') };
}
