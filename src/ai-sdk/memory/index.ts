/** Memory across threads: the embedder that recall and `embedPendingMemory` use. */
export { createMemoryEmbedder, type CreateMemoryEmbedderOptions } from './create-memory-embedder.js';
