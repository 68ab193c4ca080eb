/**
 * Turns texts into embedding vectors for memory recall: what `createMemoryEmbedder({ model })` (from
 * `agent-history/ai-sdk`) makes of an AI SDK embedding model, or any function of the application's.
 */
export interface MemoryEmbedder {
  /**
   * The embedding model's id, stored with every embedding: only embeddings of the same model are compared, so a
   * change of model re-embeds (with `embedPendingMemory`) instead of comparing vectors of two spaces.
   */
  readonly modelId: string;
  /** One vector per text, in order, each of the same length. */
  embed(texts: string[]): Promise<number[][]>;
}
