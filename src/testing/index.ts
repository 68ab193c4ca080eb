/**
 * `agent-history/testing`: an in-memory `ContextStore` (from `agent-history`) for tests of code that runs the context engine,
 * without a database. It keeps the same contract as `tenantStore.contextStore(threadId)`.
 */
export {
  createMemoryContextStore,
  type CreateMemoryContextStoreOptions,
  type MemoryContextStore,
} from './memory-context-store.js';
export type { AppendMemoryMessageInput } from './append-memory-message.js';
export {
  createSharedMemory,
  type CreateSharedMemoryOptions,
  type SharedMemory,
  type SharedMemoryMember,
} from './shared-memory.js';
