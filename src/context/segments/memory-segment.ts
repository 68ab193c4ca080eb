import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextMessage } from '../../model/context-store.js';
import type { MemorySegment } from './context-segment.js';

const header =
  '[Earlier messages that may be relevant, found by search. They are quoted from outside the recent conversation.]';

/** Options of {@link createMemorySegment}. */
export interface CreateMemorySegmentOptions {
  /** The messages found, best first (already filtered to eligible ones outside the context). */
  messages: readonly ContextMessage[];
  /** Counts the memory message. */
  measure: ContextMeasure;
  /** The largest memory message, in raw tokens; lower-ranked messages are left out to stay under it. */
  maxTokens: number;
  /** Characters quoted from one message. */
  messageCharacters: number;
}

/**
 * Quotes relevant earlier messages (their text parts) in one `user` message, as `[message 12, user] …`.
 * Returns null when nothing is left to quote. Deterministic, so a snapshot rebuild quotes the same text.
 */
export function createMemorySegment({
  messages,
  measure,
  maxTokens,
  messageCharacters,
}: CreateMemorySegmentOptions): MemorySegment | null {
  const quotes: Array<{ sequence: number; text: string }> = [];
  for (const stored of messages) {
    const text = stored.message.parts
      .filter((part) => part.type === 'text')
      .map((part) => String(part.text))
      .join('\n')
      .trim();
    if (text === '') continue;
    const quoted = text.length > messageCharacters ? `${text.slice(0, messageCharacters)} […]` : text;
    const candidate = [
      ...quotes,
      { sequence: stored.sequence, text: `[message ${stored.sequence}, ${stored.message.role}] ${quoted}` },
    ];
    if (measure.tokenCounter.count(render(candidate)) > maxTokens) continue;
    quotes.push(candidate.at(-1)!);
  }
  if (quotes.length === 0) return null;
  const message: ModelMessage = { role: 'user', content: [{ type: 'text', text: render(quotes) }] };
  return {
    kind: 'memory',
    sequences: quotes.map((quote) => quote.sequence),
    messages: [message],
    tokens: measure.countMessage(message),
  };
}

function render(quotes: ReadonlyArray<{ text: string }>): string {
  return [header, '', ...quotes.map((quote) => quote.text)].join('\n');
}
