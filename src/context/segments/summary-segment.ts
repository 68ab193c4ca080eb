import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextSummary } from '../../model/context-store.js';
import type { SummarySegment } from './context-segment.js';

/** The text of the summary message: a header naming the covered range, then the summary. */
export function renderSummaryText({
  fromSequence,
  throughSequence,
  content,
}: Pick<ContextSummary, 'fromSequence' | 'throughSequence' | 'content'>): string {
  return `[Summary of the earlier conversation, messages ${fromSequence} to ${throughSequence}. It replaces those messages.]\n\n${content}`;
}

/**
 * The summary as a context segment: one `user` message (never a system message: `streamText` rejects those),
 * placed first.
 */
export function createSummarySegment({
  summary,
  measure,
}: {
  summary: Pick<ContextSummary, 'id' | 'fromSequence' | 'throughSequence' | 'content'>;
  measure: ContextMeasure;
}): SummarySegment {
  const message: ModelMessage = { role: 'user', content: [{ type: 'text', text: renderSummaryText(summary) }] };
  return {
    kind: 'summary',
    summaryId: summary.id,
    fromSequence: summary.fromSequence,
    throughSequence: summary.throughSequence,
    content: summary.content,
    messages: [message],
    tokens: measure.countMessage(message),
  };
}
