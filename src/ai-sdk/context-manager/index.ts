/** The context manager: the context engine as AI SDK v7 calls it (`prepareStep`, `initialMessages`). */
export {
  createContextManager,
  type ContextManager,
  type CreateContextManagerOptions,
} from './create-context-manager.js';
export type { ContextManagerModel } from './resolve-manager-profile.js';

// The context engine, which `createContextManager` runs, and what its options, results and reports name: the public
// list of src/context. It does not need `ai` at run time (it only uses its message types), but it works on AI SDK
// model messages, so it is exported here, once.
export * from '../../context/index.js';
