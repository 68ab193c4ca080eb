import { safeValidateUIMessages, type UIMessage } from 'ai';
import { InvalidMessageError } from '../../errors/invalid-message-error.js';
import { describeValidationFailure } from './describe-validation-failure.js';

type ValidateOptions<UI_MESSAGE extends UIMessage> = Parameters<typeof safeValidateUIMessages<UI_MESSAGE>>[0];

/**
 * The application's message schemas, as `validateUIMessages` takes them. Give them all: what is not given is
 * not checked (metadata, data parts, tool inputs and outputs).
 */
export interface ChatSchemas<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The tools whose parts may appear in messages (their input and output schemas are checked). */
  tools?: ValidateOptions<UI_MESSAGE>['tools'];
  /** The schema of `message.metadata`. */
  metadataSchema?: ValidateOptions<UI_MESSAGE>['metadataSchema'];
  /** One schema per data part name (`data-${name}`); a data part without a schema is then an error. */
  dataSchemas?: ValidateOptions<UI_MESSAGE>['dataSchemas'];
}

/**
 * Validates messages with the AI SDK's `safeValidateUIMessages` and the application's schemas; returns the
 * parsed messages (metadata and data replaced by their parsed values). Throws {@link InvalidMessageError}
 * naming the path of the first problem (`message.parts[1].data.percent`), the value there, and the reason.
 *
 * @param path What the messages are, for the error (`message`, `history`).
 */
export async function validateChatMessages<UI_MESSAGE extends UIMessage>(
  messages: unknown[],
  { tools, metadataSchema, dataSchemas }: ChatSchemas<UI_MESSAGE>,
  path = 'messages',
): Promise<UI_MESSAGE[]> {
  const result = await safeValidateUIMessages<UI_MESSAGE>({ messages, tools, metadataSchema, dataSchemas });
  if (result.success) return result.data;
  const failure = describeValidationFailure(result.error, path, messages);
  throw new InvalidMessageError({
    path: failure.path,
    value: failure.value,
    message: failure.reason,
    cause: result.error,
  });
}
