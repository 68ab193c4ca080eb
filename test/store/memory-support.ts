import { MockEmbeddingModelV4 } from 'ai/test';
import { createMemoryEmbedder } from '../../src/ai-sdk/index.js';
import type { MemoryEmbedder } from '../../src/index.js';

/**
 * Words that mean the same thing to the mock model: each group is one dimension, so "measurement" and "metric"
 * are close by vector while sharing no word (what full-text cannot find).
 */
const CONCEPTS = [
  ['metric', 'imperial', 'measurement', 'measurements', 'units', 'unit', 'system'],
  ['prefer', 'like', 'likes', 'favourite', 'favorite'],
  ['weather', 'rain', 'sunny'],
  ['cat', 'cats', 'pet', 'pets'],
];
const DIMENSIONS = 32;

/** A word's dimension: its concept's, or a hash of the word into the rest. */
function dimensionOf(word: string): number {
  const concept = CONCEPTS.findIndex((words) => words.includes(word));
  if (concept >= 0) return concept;
  let hash = 7;
  for (const character of word) hash = (hash * 31 + character.charCodeAt(0)) % 1_000_003;
  return CONCEPTS.length + (hash % (DIMENSIONS - CONCEPTS.length));
}

/** A deterministic bag-of-words embedding: a count per dimension of the lower-cased words. */
export function bagOfWords(text: string): number[] {
  const vector = Array.from({ length: DIMENSIONS }, () => 0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) vector[dimensionOf(word)]! += 1;
  return vector;
}

/** The mock AI SDK embedding model (bag of words), and the embedder over it that the store is given. */
export function mockEmbedding(modelId = 'bag-of-words') {
  const model = new MockEmbeddingModelV4({
    provider: 'mock',
    modelId,
    maxEmbeddingsPerCall: 16,
    doEmbed: async ({ values }) => ({ embeddings: values.map(bagOfWords), warnings: [] }),
  });
  const embedder: MemoryEmbedder = createMemoryEmbedder({ model });
  return { model, embedder };
}
