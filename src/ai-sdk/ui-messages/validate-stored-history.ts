import { safeValidateUIMessages, type UIMessage } from 'ai';
import { validateStoredMessages } from '../../context/stages/validate-stored-messages.js';
import type { ContextMessage } from '../../model/context-store.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import { toUIMessage } from './ui-message-mapping.js';
import type { ChatSchemas } from './validate-chat-messages.js';

/** A stored message the turn leaves out of the model's context, and why. */
export interface InvalidStoredMessage {
  /** The message's id. */
  id: string;
  /** Its sequence in the thread. */
  sequence: number;
  /** What is wrong with it: the structure check's or the schemas' message. */
  reason: string;
}

/**
 * Validates a thread's stored messages for a new turn without ever refusing the turn for them: older shapes are
 * migrated first (AI SDK v4 `tool-invocation` parts and file parts, `rawInput`; see `validateStoredMessages`),
 * then each message is checked with today's schemas. A message that still fails (a changed `metadataSchema`, a
 * tool whose schema changed) is left out and returned in `invalid` with the reason.
 */
export async function validateStoredHistory<UI_MESSAGE extends UIMessage>(
  rows: StoredMessage[],
  { tools, metadataSchema, dataSchemas }: ChatSchemas<UI_MESSAGE>,
): Promise<{ messages: UI_MESSAGE[]; invalid: InvalidStoredMessage[] }> {
  const { messages: migrated, report } = validateStoredMessages({ messages: rows as unknown as ContextMessage[] });
  const invalid: InvalidStoredMessage[] = report.removed.flatMap((removal) => {
    const row = rows.find((candidate) => candidate.sequence === removal.sequence);
    return row ? [{ id: row.message.id, sequence: row.sequence, reason: removal.detail ?? removal.reason }] : [];
  });
  const validate = (messages: UI_MESSAGE[]) =>
    safeValidateUIMessages<UI_MESSAGE>({ messages, tools, metadataSchema, dataSchemas });
  const candidates = migrated.map((row) => ({ row, message: toUIMessage<UI_MESSAGE>(row as never) }));
  const whole = await validate(candidates.map(({ message }) => message));
  if (whole.success) return { messages: whole.data, invalid };
  // Some message fails: check them one by one, so that only the failing ones are left out.
  const messages: UI_MESSAGE[] = [];
  for (const { row, message } of candidates) {
    const result = await validate([message]);
    if (result.success) messages.push(...result.data);
    else invalid.push({ id: message.id, sequence: row.sequence, reason: result.error.message });
  }
  return { messages, invalid: invalid.sort((a, b) => a.sequence - b.sequence) };
}
