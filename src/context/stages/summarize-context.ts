import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextSummaryPolicy } from '../contracts/context-policy.js';
import type { MessageSegment, SummarySegment } from '../segments/context-segment.js';
import type { ContextStore } from '../../model/context-store.js';
import type { ContextSummarizer, ContextSummarizerInput } from '../contracts/context-summarizer.js';
import { renderSummaryTranscript } from './summary-prompt.js';
import { createSummarySegment } from '../segments/summary-segment.js';

/** Options of {@link summarizeContext}. */
export interface SummarizeContextOptions {
  /** The turns to fold in, oldest first (stored messages only). */
  overflow: readonly MessageSegment[][];
  /** The summary being extended, or null. */
  previous: SummarySegment | null;
  /** Writes the summary text. */
  summarizer: ContextSummarizer;
  /** Stores the new summary. */
  store: Pick<ContextStore, 'writeSummary'>;
  /** Counts transcripts and the summary. */
  measure: ContextMeasure;
  /** Sizes and timeout. */
  policy: ContextSummaryPolicy;
  /** Stored with the summary. */
  policyVersion: string;
  /** Whether the new summary would stay in the context; when false, nothing is written (the engine trims). */
  fits?: (summary: SummarySegment) => boolean;
}

/** The outcome of {@link summarizeContext}. */
export type SummarizeContextResult =
  { status: 'created'; summary: SummarySegment; rounds: number } | { status: 'failed'; error: string; rounds: number };

/**
 * Stage 7's side effect: extends the running summary incrementally, previous summary plus the oldest turns
 * that do not fit, into a new artifact over the inclusive range `[previous.from ?? first, last folded]`. Turns
 * are folded in rounds whose transcript stays under `policy.inputMaxTokens` (the summarizer has a window too).
 * Each call is aborted after `policy.timeoutMs`. A call that throws, times out or returns nothing fails the
 * whole summarization and nothing is written (peers.md pain point E); the engine then trims instead.
 */
export async function summarizeContext({
  overflow,
  previous,
  summarizer,
  store,
  measure,
  policy,
  policyVersion,
  fits = () => true,
}: SummarizeContextOptions): Promise<SummarizeContextResult> {
  const turns = overflow.filter((turn) => turn.length > 0);
  const sequences = turns.flat().map((segment) => segment.sequence);
  if (turns.length === 0 || sequences.some((sequence) => sequence === null)) {
    return { status: 'failed', error: 'only stored messages can be summarized', rounds: 0 };
  }
  const rounds = splitIntoRounds(turns, measure, policy);
  const fromSequence = previous?.fromSequence ?? Math.min(...(sequences as number[]));
  let content = previous?.content ?? null;
  let calls = 0;
  for (const roundTurns of rounds) {
    const segments = roundTurns.flat();
    const messages = segments.flatMap((segment) => segment.messages);
    const throughSequence = Math.max(...segments.map((segment) => segment.sequence as number));
    calls += 1;
    try {
      const text = await summarizeWithTimeout(summarizer, policy.timeoutMs, (abortSignal) => ({
        previousSummary: content,
        transcript: renderSummaryTranscript({ messages, toolOutputCharacters: policy.toolOutputCharacters }),
        messages: messages.map(copyForSummarizer),
        fromSequence,
        throughSequence,
        maxOutputTokens: policy.reserveTokens,
        abortSignal,
      }));
      if (typeof text !== 'string' || text.trim() === '')
        return { status: 'failed', error: 'the summarizer returned no text', rounds: calls };
      content = text.trim();
    } catch (error) {
      return { status: 'failed', error: error instanceof Error ? error.message : String(error), rounds: calls };
    }
  }
  const throughSequence = Math.max(...(sequences as number[]));
  // A summary the trim would drop at once is not written: it would only be a stale row to extend later.
  if (
    !fits(
      createSummarySegment({ summary: { id: 'unwritten', fromSequence, throughSequence, content: content! }, measure }),
    )
  )
    return {
      status: 'failed',
      error: 'the summary does not fit next to the newest turn; nothing was written',
      rounds: calls,
    };
  try {
    const stored = await store.writeSummary({
      fromSequence,
      throughSequence,
      content: content!,
      tokenCount: measure.tokenCounter.count(content!),
      tokenCounterId: measure.tokenCounter.id,
      summarizerModel: summarizer.id,
      policyVersion,
      previousSummaryId: previous?.summaryId ?? null,
    });
    return { status: 'created', summary: createSummarySegment({ summary: stored, measure }), rounds: calls };
  } catch (error) {
    return {
      status: 'failed',
      error: `the summary could not be stored: ${error instanceof Error ? error.message : String(error)}`,
      rounds: calls,
    };
  }
}

// Rounds of whole turns whose transcripts stay under `inputMaxTokens` together (a turn larger than that is a
// round of its own): the summarizer has a context window too.
function splitIntoRounds(
  turns: readonly MessageSegment[][],
  measure: ContextMeasure,
  policy: ContextSummaryPolicy,
): MessageSegment[][][] {
  const rounds: MessageSegment[][][] = [];
  let round: MessageSegment[][] = [];
  let roundTokens = 0;
  for (const turn of turns) {
    const tokens = measure.tokenCounter.count(
      renderSummaryTranscript({
        messages: turn.flatMap((segment) => segment.messages),
        toolOutputCharacters: policy.toolOutputCharacters,
      }),
    );
    if (round.length > 0 && roundTokens + tokens > policy.inputMaxTokens) {
      rounds.push(round);
      round = [];
      roundTokens = 0;
    }
    round.push(turn);
    roundTokens += tokens;
  }
  rounds.push(round);
  return rounds;
}

// A summarizer that hangs must not hang the request: the call is aborted and rejected after `timeoutMs`.
async function summarizeWithTimeout(
  summarizer: ContextSummarizer,
  timeoutMs: number,
  input: (abortSignal: AbortSignal) => ContextSummarizerInput,
): Promise<string> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        controller.abort(new Error(`the summarizer timed out after ${timeoutMs} ms`));
        reject(new Error(`the summarizer timed out after ${timeoutMs} ms`));
      }, timeoutMs);
    });
    return await Promise.race([summarizer.summarize(input(controller.signal)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// The summarizer's own copy of a message: its objects and arrays copied (other values, binary data or URLs, shared).
// The engine's messages may be kept past this request (a store's cache, frozen) and must not change; a summarizer
// that edits what it is handed (shortens texts, drops parts) works as it would on messages loaded for it alone.
function copyForSummarizer<VALUE>(value: VALUE): VALUE {
  if (Array.isArray(value)) return value.map(copyForSummarizer) as VALUE;
  if (typeof value !== 'object' || value === null) return value;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = copyForSummarizer(item);
  return copy as VALUE;
}
