import type { UIMessage } from 'ai';
import type { StoredMessagePart, StoredMetadata } from '../../schema/define-agent-tables.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import type { StorableMessage } from '../../model/stored-rows.js';

/**
 * Maps a `UIMessage` to the shape the store writes: the same id, role, parts and metadata, nothing added.
 * Values that JSON cannot hold (`undefined` fields, functions) are dropped the way `JSON.stringify` drops them,
 * so what comes back from {@link toUIMessage} equals what `useChat` holds.
 *
 * @example
 * await store.appendMessage(threadId, fromUIMessage(message));
 */
export function fromUIMessage<UI_MESSAGE extends UIMessage>(message: UI_MESSAGE): StorableMessage<StoredMetadata> {
  const storable: StorableMessage<StoredMetadata> = {
    id: message.id,
    role: message.role,
    parts: message.parts as unknown as StoredMessagePart[],
  };
  if (message.metadata !== undefined) storable.metadata = message.metadata as StoredMetadata;
  return storable;
}

/**
 * Maps a stored row back to the `UIMessage` it was written from, typed as the application's `UI_MESSAGE`
 * (metadata, data parts and tools). The row's lifecycle (status, sequence, exclusion) stays on the
 * {@link StoredMessage}; nothing of it leaks into the message.
 *
 * Exactness: id, role, parts and metadata come back deep-equal to what was written, with three exceptions. Two are
 * JSON limits: `metadata: {}` comes back as no metadata, and a `Date` comes back as its ISO string (validate with a
 * `metadataSchema` that coerces dates, as {@link loadThreadPage} does, to get the `Date` back). The third is the AI
 * SDK's deprecated `rawInput` of an `output-error` tool part: it is stored as the part's `input` (unless the part has
 * one), the field the AI SDK reads instead, so the model is sent the same call.
 */
export function toUIMessage<UI_MESSAGE extends UIMessage = UIMessage>(
  stored: Pick<StoredMessage, 'message'>,
): UI_MESSAGE {
  const { id, role, parts, metadata } = stored.message;
  const message = { id, role, parts } as unknown as UI_MESSAGE;
  if (metadata !== undefined) message.metadata = metadata as UI_MESSAGE['metadata'];
  return message;
}

/** {@link toUIMessage} over a list, keeping its order. */
export function toUIMessages<UI_MESSAGE extends UIMessage = UIMessage>(
  stored: ReadonlyArray<Pick<StoredMessage, 'message'>>,
): UI_MESSAGE[] {
  return stored.map((row) => toUIMessage<UI_MESSAGE>(row));
}
