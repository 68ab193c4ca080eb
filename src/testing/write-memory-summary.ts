import { assertSummaryContent, assertSummaryRange } from '../errors/assert-input.js';
import type { ContextSummary, NewSummary } from '../model/context-store.js';
import { lastSequence, strip, type MemoryContextState } from './memory-context-state.js';

/**
 * The in-memory `writeSummary`: stores a summary over an inclusive range of the thread, refusing empty content
 * and a range outside the thread with the same checks and messages as the Postgres store.
 */
export async function writeMemorySummary(state: MemoryContextState, input: NewSummary): Promise<ContextSummary> {
  await Promise.resolve();
  const content = assertSummaryContent(input.content);
  assertSummaryRange(input.fromSequence, input.throughSequence, lastSequence(state));
  const summary = {
    id: state.generateId('summary'),
    fromSequence: input.fromSequence,
    throughSequence: input.throughSequence,
    content,
    tokenCount: input.tokenCount,
    policyVersion: input.policyVersion,
    previousSummaryId: input.previousSummaryId ?? null,
    stale: false,
    createdOrder: ++state.order,
  };
  state.summaries.push(summary);
  return strip(summary, 'createdOrder');
}
