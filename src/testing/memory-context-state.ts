import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { ContextMessage, ContextSnapshot, ContextSummary } from '../model/context-store.js';

/**
 * What the in-memory store of one thread holds. The operations (`loadMemoryContext`, `writeMemorySummary`, …) read
 * and change it in place; the store hands out copies only, so a caller can never change it behind their back.
 */
export interface MemoryContextState {
  /** The thread's messages; `messages[i]` has sequence `i + 1` (sequences are gapless from 1). */
  messages: ContextMessage[];
  /** The summaries in the order written; `createdOrder` stands in for the Postgres store's `created_at`. */
  summaries: Array<ContextSummary & { createdOrder: number }>;
  /** The snapshots in the order written (so by version); a redaction makes them `stale`. */
  snapshots: Array<ContextSnapshot & { stale: boolean }>;
  /** The `createdOrder` of the last summary written; 0 before the first. */
  order: number;
  /** Makes summary and snapshot ids. */
  generateId: (kind: 'summary' | 'snapshot') => string;
}

/** Options of {@link createMemoryContextState}. */
export interface CreateMemoryContextStateOptions {
  /** Messages to start with (copied); their sequences must be 1, 2, 3…. */
  messages: readonly ContextMessage[];
  /** Makes summary and snapshot ids. */
  generateId: (kind: 'summary' | 'snapshot') => string;
}

/** A new state holding copies of `messages`, or {@link InvalidArgumentError} when their sequences are not 1, 2, 3…. */
export function createMemoryContextState({
  messages,
  generateId,
}: CreateMemoryContextStateOptions): MemoryContextState {
  const state: MemoryContextState = { messages: [], summaries: [], snapshots: [], order: 0, generateId };
  messages.forEach((message, index) => {
    if (message.sequence !== index + 1)
      throw new InvalidArgumentError({
        argument: `messages[${index}].sequence`,
        value: message.sequence,
        message: `expected ${index + 1}: sequences are gapless from 1.`,
      });
    state.messages.push(structuredClone(message));
  });
  return state;
}

/** The sequence of the thread's last message; 0 when it has none. */
export function lastSequence(state: MemoryContextState): number {
  return state.messages.length;
}

/** The stored message (not a copy) with that sequence, or {@link InvalidArgumentError}. */
export function requireMessage(state: MemoryContextState, sequence: number): ContextMessage {
  const message = state.messages[sequence - 1];
  if (!message)
    throw new InvalidArgumentError({
      argument: 'sequence',
      value: sequence,
      message: `the thread has messages 1 to ${lastSequence(state)}.`,
    });
  return message;
}

/** The newest snapshot version, stale ones included; 0 before the first snapshot. */
export function currentVersion(state: MemoryContextState): number {
  return state.snapshots.reduce((max, snapshot) => Math.max(max, snapshot.version), 0);
}

/** A deep copy of `value` without the given bookkeeping keys (`createdOrder`, `stale`). */
export function strip<T extends object>(value: T, ...keys: string[]): T {
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const key of keys) delete copy[key];
  return copy as T;
}
