/** Summarizers for the context engine: one that calls a model, one that needs none. */
export { createGenerateTextSummarizer, type CreateGenerateTextSummarizerOptions } from './generate-text-summarizer.js';
export { createOfflineSummarizer, type CreateOfflineSummarizerOptions } from './offline-summarizer.js';
