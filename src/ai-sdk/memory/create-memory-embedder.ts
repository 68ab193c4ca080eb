import { embedMany, type EmbeddingModel } from 'ai';
import type { MemoryEmbedder } from '../../model/memory-embedder.js';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';

/** The options of {@link createMemoryEmbedder}. */
export interface CreateMemoryEmbedderOptions {
  /** The AI SDK embedding model (`openai.embedding('text-embedding-3-small')`, a gateway id, a mock). */
  model: EmbeddingModel;
  /**
   * The id stored with every embedding: only embeddings of one id are compared.
   * @default the model's `provider:modelId`, or the string given as the model
   */
  modelId?: string;
  /** How many embedding calls run at once when a batch is split by the model's own limit. @default 2 */
  maxParallelCalls?: number;
  /** Retries per embedding call (the AI SDK's). @default 2 */
  maxRetries?: number;
}

/**
 * A {@link MemoryEmbedder} over an AI SDK embedding model, with `embedMany`: for `embedPendingMemory`,
 * `recallMessages` and `contextStore(threadId, { embedder })`.
 *
 * @example
 * const embedder = createMemoryEmbedder({ model: openai.embedding('text-embedding-3-small') });
 * await store.embedPendingMemory({ embedder });
 */
export function createMemoryEmbedder({
  model,
  modelId,
  maxParallelCalls = 2,
  maxRetries = 2,
}: CreateMemoryEmbedderOptions): MemoryEmbedder {
  const id = modelId ?? modelIdOf(model);
  if (typeof id !== 'string' || id.length === 0 || id.length > 200)
    throw new InvalidArgumentError({
      argument: 'modelId',
      value: id,
      message: 'expected a string of 1 to 200 characters (the model has no id to use).',
    });
  return {
    modelId: id,
    async embed(texts) {
      const { embeddings } = await embedMany({ model, values: texts, maxParallelCalls, maxRetries });
      return embeddings;
    },
  };
}

function modelIdOf(model: EmbeddingModel): string | undefined {
  if (typeof model === 'string') return model;
  const { provider, modelId } = model as { provider?: unknown; modelId?: unknown };
  if (typeof modelId !== 'string') return undefined;
  return typeof provider === 'string' && provider.length > 0 ? `${provider}:${modelId}` : modelId;
}
