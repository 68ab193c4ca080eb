import type {
  ContextMessage,
  ContextSnapshot,
  ContextStore,
  ContextSummary,
  WorkingMemoryStore,
} from '../model/context-store.js';
import { joinSharedMemory, type SharedMemoryMember } from './shared-memory.js';
import { appendMemoryMessage, updateMemoryMessage, type AppendMemoryMessageInput } from './append-memory-message.js';
import { loadMemoryContext } from './load-memory-context.js';
import { createMemoryContextState, strip } from './memory-context-state.js';
import { redactMemoryMessage } from './redact-memory-message.js';
import { searchMemoryMessages } from './search-memory-messages.js';
import { writeMemorySnapshot } from './write-memory-snapshot.js';
import { writeMemorySummary } from './write-memory-summary.js';

/**
 * An in-memory {@link ContextStore} for one thread, with helpers to write and inspect it. With `memory`, it has
 * `loadMemory` and is a {@link WorkingMemoryStore} (`getWorkingMemory`, `updateWorkingMemory`).
 */
export interface MemoryContextStore extends ContextStore, Partial<WorkingMemoryStore> {
  /** Appends a message with the next sequence and returns it. */
  appendMessage(input: AppendMemoryMessageInput): ContextMessage;
  /**
   * Changes a stored message (status, parts, context state, deletion, …). As the database does, a change of parts
   * raises `contentVersion` by at least one and no change lowers it (a higher one given in `patch` is kept).
   */
  updateMessage(sequence: number, patch: Partial<Omit<ContextMessage, 'sequence'>>): ContextMessage;
  /**
   * Redacts a message: its context state becomes `redacted` and its parts empty, and, as the Postgres store does,
   * every summary whose range covers it and every snapshot whose boundary is at or after it becomes stale.
   */
  redactMessage(sequence: number): void;
  /** Every stored message, oldest first (copies). */
  readonly messages: readonly ContextMessage[];
  /** Every summary written, oldest first (copies). */
  readonly summaries: readonly ContextSummary[];
  /** Every snapshot written, oldest first (copies). */
  readonly snapshots: readonly ContextSnapshot[];
}

/** Options of {@link createMemoryContextStore}. */
export interface CreateMemoryContextStoreOptions {
  /** Messages to start with; their sequences must be 1, 2, 3…. */
  messages?: readonly ContextMessage[];
  /**
   * Memory across threads: the tenant's `SharedMemory` (`createSharedMemory()`), this thread's id and its
   * user. The store then loads the working memory and recalls from the user's other threads. @default none
   */
  memory?: SharedMemoryMember;
  /** Test hooks. */
  _internal?: {
    /**
     * Makes summary and snapshot ids.
     * @default a counter: `summary-1`, `snapshot-1`, …
     */
    generateId?: (kind: 'summary' | 'snapshot') => string;
  };
}

/**
 * A {@link ContextStore} kept in memory: it enforces the same contract as the Postgres store (snapshot
 * `expectedVersion` with `VersionConflictError`, never overwriting; summaries with content and a valid
 * inclusive range; the replay tail strictly after the snapshot boundary; stale summaries after a redaction).
 * For tests, benchmarks and the offline demo.
 *
 * @example
 * const store = createMemoryContextStore();
 * store.appendMessage({ message: { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } });
 *
 * With `memory`, the store also loads the working memory and recalls from the user's other threads, and is a
 * `WorkingMemoryStore`.
 */
export function createMemoryContextStore(
  options: CreateMemoryContextStoreOptions & { memory: SharedMemoryMember },
): MemoryContextStore & WorkingMemoryStore & Required<Pick<ContextStore, 'loadMemory'>>;
/** {@link createMemoryContextStore} without memory across threads. */
export function createMemoryContextStore(options?: CreateMemoryContextStoreOptions): MemoryContextStore;
/** The implementation of both forms. */
export function createMemoryContextStore({
  messages = [],
  memory,
  _internal = {},
}: CreateMemoryContextStoreOptions = {}): MemoryContextStore {
  const counters = { summary: 0, snapshot: 0 };
  const generateId = _internal.generateId ?? ((kind: 'summary' | 'snapshot') => `${kind}-${++counters[kind]}`);
  const state = createMemoryContextState({ messages, generateId });
  return {
    get messages() {
      return state.messages.map((message) => structuredClone(message));
    },
    get summaries() {
      return state.summaries.map((summary) => strip(summary, 'createdOrder'));
    },
    get snapshots() {
      return state.snapshots.map((snapshot) => structuredClone(snapshot));
    },
    appendMessage: (input) => appendMemoryMessage(state, input),
    updateMessage: (sequence, patch) => updateMemoryMessage(state, sequence, patch),
    redactMessage: (sequence) => redactMemoryMessage(state, sequence),
    loadContext: () => loadMemoryContext(state),
    writeSummary: (input) => writeMemorySummary(state, input),
    writeSnapshot: (input) => writeMemorySnapshot(state, input),
    searchMessages: (input) => searchMemoryMessages(state, input),
    ...(memory ? joinSharedMemory(memory, state) : {}),
  };
}
