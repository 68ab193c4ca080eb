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

/**
 * Stores a summary artifact over an inclusive sequence range of the thread. Empty content is refused, so a
 * failed summarizer call can never write a summary.
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
  return inTenant(context, async (tx) => {
    const threadRow = await requireThread(context, tx, thread);
    assertSummaryRange(input.fromSequence, input.throughSequence, threadRow.messageCount);
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
