import type { ModelMessage } from 'ai';

/** What a summarizer is asked to fold into the running summary. */
export interface ContextSummarizerInput {
  /** The summary being extended, or null for the first one. */
  previousSummary: string | null;
  /** The messages to fold in, rendered as text by {@link renderSummaryTranscript}. */
  transcript: string;
  /** The same messages as model messages. */
  messages: ModelMessage[];
  /** The first sequence the new summary covers (inclusive). */
  fromSequence: number;
  /** The last sequence the new summary covers (inclusive). */
  throughSequence: number;
  /** The summary's size limit in tokens (the policy's summary reserve). */
  maxOutputTokens: number;
  /** Aborted when the policy's summary timeout passes; the call then counts as failed. */
  abortSignal: AbortSignal;
}

/**
 * Writes a summary. It returns the summary text; an empty text, a thrown error, an abort or a timeout all
 * count as failure, and a failed call never writes a summary (the engine trims instead).
 */
export interface ContextSummarizer {
  /** Stored with each summary as its `summarizerModel`, e.g. `openai:gpt-4o-mini` or `offline`. */
  readonly id: string;
  /** Returns the new summary, in the sections of {@link buildSummaryPrompt}. */
  summarize(input: ContextSummarizerInput): Promise<string>;
}
