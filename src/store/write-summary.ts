import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import {
  assertInteger,
  assertOptionalText,
  assertOptionalUuid,
  assertRequiredText,
  assertSummaryContent,
  assertSummaryRange,
  assertThreadId,
} from '../errors/assert-input.js';
import type { NewSummary } from '../model/context-store.js';
import type { StoredSummary } from '../model/stored-rows.js';
import { summaryColumns, toSummary } from './context-artifact-rows.js';
import { requireThread } from './require-thread.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertSourceVersions, assertSourcesCurrent } from './summary-sources.js';

/**
 * Stores a summary artifact over an inclusive sequence range of the thread. Empty content is refused, so a
 * failed summarizer call can never write a summary. A summary whose `sourceVersions` or previous summary were
 * redacted since the summarizer read them is refused with {@link VersionConflictError} (see `NewSummary`).
 */
export function writeSummary(context: StoreContext, threadId: string, input: NewSummary): Promise<StoredSummary> {
  const thread = assertThreadId(threadId);
  const content = assertSummaryContent(input.content);
  if (content.includes('\u0000') || !content.isWellFormed()) {
    throw new InvalidArgumentError({
      argument: 'summary.content',
      value: content,
      message: 'contains NUL or a lone surrogate.',
    });
  }
  assertInteger('summary.tokenCount', input.tokenCount, 0, 10_000_000);
  const policyVersion = assertRequiredText('summary.policyVersion', input.policyVersion);
  const tokenCounterId = assertOptionalText('summary.tokenCounterId', input.tokenCounterId, 200);
  const summarizerModel = assertOptionalText('summary.summarizerModel', input.summarizerModel, 200);
  const previousSummaryId = assertOptionalUuid('summary.previousSummaryId', input.previousSummaryId);
  const sources = assertSourceVersions(input.sourceVersions);
  return inTenant(context, async (tx) => {
    // The thread first, then the covered messages: the order a redaction locks them in (it locks the fork family
    // FOR UPDATE, which KEY SHARE waits for), so the two never deadlock; appends (NO KEY UPDATE) are not blocked.
    const threadRow = await requireThread(context, tx, thread, { lock: 'key share' });
    assertSummaryRange(input.fromSequence, input.throughSequence, threadRow.messageCount);
    await assertSourcesCurrent(context, tx, thread, sources, previousSummaryId);
    const [row] = await tx
      .insert(context.tables.agentSummary)
      .values({
        tenantId: context.tenantId,
        threadId: thread,
        userId: threadRow.userId,
        fromSequence: input.fromSequence,
        throughSequence: input.throughSequence,
        content,
        tokenCount: input.tokenCount,
        tokenCounterId,
        summarizerModel,
        policyVersion,
        previousSummaryId,
      })
      .returning(summaryColumns(context));
    return toSummary(row!);
  });
}
