import type { ContextMessage } from '../model/context-store.js';
import type { ContextUIMessage } from '../model/context-ui-message.js';
import type { ContextState, MessageStatus } from '../model/stored-rows.js';
import { lastSequence, requireMessage, type MemoryContextState } from './memory-context-state.js';

/** What `MemoryContextStore.appendMessage` takes. */
export interface AppendMemoryMessageInput {
  /** The `UIMessage` to store. */
  message: ContextUIMessage;
  /** @default 'completed' */
  status?: MessageStatus;
  /** @default 'eligible' */
  contextState?: ContextState;
  /** @default false */
  pinned?: boolean;
  /** @default null */
  tokenCount?: number | null;
  /** @default null */
  tokenCounterId?: string | null;
  /** Per-part counts summing to `tokenCount` (`countStoredPartTokens`). @default null */
  partTokenCounts?: number[] | null;
}

/** Appends a copy of the message with the next sequence and returns a copy of what was stored. */
export function appendMemoryMessage(
  state: MemoryContextState,
  {
    message,
    status = 'completed',
    contextState = 'eligible',
    pinned = false,
    tokenCount = null,
    tokenCounterId = null,
    partTokenCounts = null,
  }: AppendMemoryMessageInput,
): ContextMessage {
  const stored: ContextMessage = {
    sequence: lastSequence(state) + 1,
    message: structuredClone(message),
    status,
    contextState,
    pinned,
    tokenCount,
    tokenCounterId,
    partTokenCounts,
    deletedAt: null,
  };
  state.messages.push(stored);
  return structuredClone(stored);
}

/**
 * Applies a copy of `patch` to the stored message and returns a copy; `InvalidArgumentError` for a missing one. As
 * the database does, a patch that changes the parts raises `contentVersion` to at least one above the stored version
 * (taken as 1 when unset), and no patch lowers it: a higher `contentVersion` in the patch is kept. Parts are compared
 * as the text the store would write (`JSON.stringify`, key order included), as the database compares its json.
 */
export function updateMemoryMessage(
  state: MemoryContextState,
  sequence: number,
  patch: Partial<Omit<ContextMessage, 'sequence'>>,
): ContextMessage {
  const message = requireMessage(state, sequence);
  const stored = message.contentVersion;
  const changed =
    patch.message !== undefined && JSON.stringify(patch.message.parts) !== JSON.stringify(message.message.parts);
  Object.assign(message, structuredClone(patch));
  if (changed || stored !== undefined || message.contentVersion !== undefined) {
    const floor = (stored ?? 1) + (changed ? 1 : 0);
    message.contentVersion = Math.max(message.contentVersion ?? floor, floor);
  }
  return structuredClone(message);
}
