import { assertSummaryContent, assertSummaryRange } from '../errors/assert-input.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import type { ContextSummary, NewSummary } from '../model/context-store.js';
import { lastSequence, strip, type MemoryContextState } from './memory-context-state.js';

/**
 * The in-memory `writeSummary`: stores a summary over an inclusive range of the thread, refusing empty content
 * and a range outside the thread with the same checks and messages as the Postgres store, and a summary whose
 * `sourceVersions` or previous summary were redacted since (`VersionConflictError`).
 */
export async function writeMemorySummary(state: MemoryContextState, input: NewSummary): Promise<ContextSummary> {
  await Promise.resolve();
  const content = assertSummaryContent(input.content);
  assertSummaryRange(input.fromSequence, input.throughSequence, lastSequence(state));
  // As the Postgres store: a summary read from a message redacted since, or extending a stale summary, is refused.
  for (const source of input.sourceVersions ?? []) {
    const current = state.messages[source.sequence - 1]?.contentVersion ?? 1;
    if (current !== source.contentVersion)
      throw new VersionConflictError({
        entity: `summary source (message ${source.sequence})`,
        expectedVersion: source.contentVersion,
        actualVersion: current,
      });
  }
  const previous = state.summaries.find((summary) => summary.id === input.previousSummaryId);
  if (previous?.stale)
    throw new VersionConflictError({ entity: `previous summary ${previous.id}`, expectedVersion: 1 });
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
