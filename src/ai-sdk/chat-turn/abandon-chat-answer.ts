import type { UIMessage } from 'ai';
import type { StoredMessagePart } from '../../schema/define-agent-tables.js';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { ApprovalContinuation } from '../approvals/approval-continuation.js';
import { ChatConflictError } from '../shared/chat-conflict-error.js';

/**
 * Ends an answer whose model could not start: finalized `failed` (a continued one keeps its parts) and its run
 * failed; returns the error to throw. A continuation that lost its claim is left alone: the message is the
 * winner's, and its own run is finished already.
 */
export async function abandonChatAnswer<UI_MESSAGE extends UIMessage>(
  answer: {
    history: TenantHistory;
    threadId: string;
    runId: string;
    assistantMessageId: string;
    continuation: ApprovalContinuation<UI_MESSAGE> | undefined;
  },
  error: unknown,
): Promise<unknown> {
  if (error instanceof ChatConflictError) return error;
  const { history, threadId, runId, assistantMessageId, continuation } = answer;
  const parts = (continuation?.message.parts ?? []) as unknown as StoredMessagePart[];
  await history.finalizeMessage(threadId, assistantMessageId, { status: 'failed', parts }).catch(() => {});
  await history.failRun(runId, { error }).catch(() => {});
  return error;
}
