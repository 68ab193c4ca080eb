import type { ContextMessage } from '../model/context-store.js';
import type { AppendMemoryMessageInput } from './memory-context-store.js';
import { lastSequence, requireMessage, type MemoryContextState } from './memory-context-state.js';

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

/** Applies a copy of `patch` to the stored message and returns a copy; `InvalidArgumentError` for a missing one. */
export function updateMemoryMessage(
  state: MemoryContextState,
  sequence: number,
  patch: Partial<Omit<ContextMessage, 'sequence'>>,
): ContextMessage {
  const message = requireMessage(state, sequence);
  Object.assign(message, structuredClone(patch));
  return structuredClone(message);
}
