import { InvalidMessageError } from '../errors/invalid-message-error.js';
import type { MessageRole } from '../model/stored-rows.js';
import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';

/** The store write a {@link MessageCheck} is asked about. */
export type MessageWrite = 'append' | 'checkpoint' | 'finalize' | 'reopen';

/** A message as a {@link MessageCheck} sees it: already through the store's own part rule, older shapes migrated. */
export interface CheckedMessage {
  /** The message id. */
  id: string;
  /** The message role. */
  role: MessageRole;
  /** The parts about to be stored. */
  parts: StoredMessagePart[];
  /** The metadata about to be stored; `undefined` when the write leaves it unchanged (checkpoint, finalize). */
  metadata: StoredMetadata | undefined;
}

/**
 * The application's own check of every message part the store writes (its metadata, data part and tool schemas),
 * run after the store's built-in AI SDK part rule and before anything is written. Throw to refuse: an
 * `InvalidMessageError` is passed on as is, anything else is wrapped in one (path `message`). `chatMessageCheck`
 * (agent-history/ai-sdk) builds one from the same schemas the chat route validates with.
 */
export type MessageCheck = (message: CheckedMessage, write: MessageWrite) => void | Promise<void>;

/** Runs the application's check, if any, giving every refusal the store's typed error. */
export async function runMessageCheck(
  check: MessageCheck | undefined,
  message: CheckedMessage,
  write: MessageWrite,
): Promise<void> {
  if (!check) return;
  try {
    await check(message, write);
  } catch (error) {
    if (error instanceof InvalidMessageError) throw error;
    throw new InvalidMessageError({
      path: 'message',
      value: message.id,
      message: error instanceof Error ? error.message : String(error),
      cause: error,
    });
  }
}
