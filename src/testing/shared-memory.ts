import { assertInteger } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import type { ContextMemory, ContextRecalledItem, ContextWorkingMemory } from '../model/context-store.js';
import type { MemoryContextState } from './memory-context-state.js';
import { scoreMemoryMessages } from './search-memory-messages.js';

/**
 * The memory the in-memory stores of one tenant share across threads (`createMemoryContextStore({ memory })`): one
 * working-memory document per user (or per thread) and the threads recall reads from. A store never sees another
 * `SharedMemory`'s (another tenant's) threads or documents, nor another user's.
 */
export interface SharedMemory {
  /** Whether a working-memory document belongs to a user (shared by their threads) or to one thread. */
  readonly scope: 'user' | 'thread';
  /** Every working-memory document, by owner (`user:<id>` or `thread:<id>`) (copies). */
  readonly workingMemories: ReadonlyMap<string, ContextWorkingMemory>;
}

/** Options of {@link createSharedMemory}. */
export interface CreateSharedMemoryOptions {
  /**
   * Whether working memory is one document per user (a store without a user keeps one per thread) or per thread.
   * @default 'user'
   */
  scope?: 'user' | 'thread';
}

interface SharedMemoryState {
  scope: 'user' | 'thread';
  documents: Map<string, ContextWorkingMemory>;
  threads: Map<string, { userId: string | null; state: MemoryContextState }>;
  created: number;
}

const states = new WeakMap<SharedMemory, SharedMemoryState>();

/**
 * A new {@link SharedMemory}: memory across the threads of one tenant, kept in memory.
 *
 * @example
 * const memory = createSharedMemory();
 * const first = createMemoryContextStore({ memory: { shared: memory, threadId: 't1', userId: 'alice' } });
 * const second = createMemoryContextStore({ memory: { shared: memory, threadId: 't2', userId: 'alice' } });
 */
export function createSharedMemory({ scope = 'user' }: CreateSharedMemoryOptions = {}): SharedMemory {
  if (scope !== 'user' && scope !== 'thread')
    throw new InvalidArgumentError({ argument: 'scope', value: scope, message: "expected 'user' or 'thread'." });
  const state: SharedMemoryState = { scope, documents: new Map(), threads: new Map(), created: 0 };
  const memory: SharedMemory = {
    scope,
    get workingMemories() {
      return new Map([...state.documents].map(([key, document]) => [key, { ...document }]));
    },
  };
  states.set(memory, state);
  return memory;
}

/** Where one in-memory store sits in a {@link SharedMemory}: its thread and its user. */
export interface SharedMemoryMember {
  /** The memory shared across the tenant's threads. */
  shared: SharedMemory;
  /** The store's thread: recall leaves it out (its messages are in the context already). */
  threadId: string;
  /** The thread's user: recall reads only their other threads. Without one, nothing is recalled. @default null */
  userId?: string | null;
}

/** The memory operations of one thread's store: `loadMemory`, `getWorkingMemory`, `updateWorkingMemory`. */
export function joinSharedMemory(
  { shared, threadId, userId = null }: SharedMemoryMember,
  thread: MemoryContextState,
): {
  loadMemory(input: { query: string; limit: number }): Promise<ContextMemory>;
  getWorkingMemory(): Promise<ContextWorkingMemory | null>;
  updateWorkingMemory(input: { content: string; expectedVersion: number }): Promise<ContextWorkingMemory>;
} {
  const state = states.get(shared);
  if (!state)
    throw new InvalidArgumentError({
      argument: 'memory.shared',
      value: shared,
      message: 'expected createSharedMemory().',
    });
  if (typeof threadId !== 'string' || threadId === '' || state.threads.has(threadId))
    throw new InvalidArgumentError({
      argument: 'memory.threadId',
      value: threadId,
      message: 'expected a thread id no other store of this shared memory has.',
    });
  state.threads.set(threadId, { userId, state: thread });
  const byUser = state.scope === 'user' && userId !== null;
  const key = byUser ? `user:${userId}` : `thread:${threadId}`;
  const read = () => {
    const document = state.documents.get(key);
    return document ? { ...document } : null;
  };
  return {
    async loadMemory({ query, limit }) {
      await Promise.resolve();
      if (typeof query !== 'string')
        throw new InvalidArgumentError({ argument: 'query', value: query, message: 'expected a string.' });
      assertInteger('limit', limit, 0, 1000);
      return {
        workingMemory: read(),
        recalled: recall(state, threadId, userId, query).slice(0, limit),
        recall: 'full-text',
      };
    },
    async getWorkingMemory() {
      await Promise.resolve();
      return read();
    },
    async updateWorkingMemory({ content, expectedVersion }) {
      await Promise.resolve();
      if (typeof content !== 'string')
        throw new InvalidArgumentError({ argument: 'content', value: content, message: 'expected a string.' });
      assertInteger('expectedVersion', expectedVersion, 0, Number.MAX_SAFE_INTEGER);
      const current = state.documents.get(key);
      const actualVersion = current?.version ?? 0;
      if (expectedVersion !== actualVersion)
        throw new VersionConflictError({ entity: 'working memory', expectedVersion, actualVersion });
      const id = current?.id ?? `working-memory-${++state.created}`;
      state.documents.set(key, { id, scope: byUser ? 'user' : 'thread', content, version: actualVersion + 1 });
      return read()!;
    },
  };
}

// The user's other threads' messages that match the query, best first (none without a user).
function recall(
  state: SharedMemoryState,
  threadId: string,
  userId: string | null,
  query: string,
): ContextRecalledItem[] {
  if (userId === null) return [];
  const items: ContextRecalledItem[] = [];
  for (const [otherId, other] of state.threads) {
    if (otherId === threadId || other.userId !== userId) continue;
    for (const { message, score, text } of scoreMemoryMessages(other.state.messages, query)) {
      const role = message.message.role;
      if (role !== 'user' && role !== 'assistant') continue;
      const messageId = message.rowId ?? message.message.id;
      items.push({
        id: `message:${messageId}`,
        sourceThreadId: otherId,
        sourceMessageId: messageId,
        sourceSequence: message.sequence,
        sourceContentVersion: message.contentVersion ?? 1,
        role,
        text,
        score,
        via: 'full-text',
      });
    }
  }
  return items.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}
