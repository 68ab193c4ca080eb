import type { UIMessage } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { InvalidMessageError } from '../../errors/invalid-message-error.js';
import { NotFoundError } from '../../errors/not-found-error.js';
import type { StoredMessagePart } from '../../schema/define-agent-tables.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import { applyApprovalResponses } from './apply-approval-responses.js';
import { ChatConflictError } from '../shared/chat-conflict-error.js';
import type { PlanChatTurnInput, PlannedChatTurn } from '../chat-turn/planned-chat-turn.js';
import { toUIMessage } from '../ui-messages/ui-message-mapping.js';
import { validateChatMessages, type ChatSchemas } from '../ui-messages/validate-chat-messages.js';
import { validateStoredHistory } from '../ui-messages/validate-stored-history.js';

const inProgress = (row: StoredMessage) => row.status === 'pending' || row.status === 'streaming';

/**
 * Plans a request whose message is an assistant message (useChat re-submits the answer after
 * `addToolApprovalResponse`): it must be the thread's newest eligible message, `completed`, with the approvals
 * answered requested by it, and otherwise identical to the stored copy. A retry of responses stored already is
 * `answer-exists` (or `answer-in-progress` while the continuation streams); nothing is written here.
 */
export async function planApprovalContinuation<UI_MESSAGE extends UIMessage>(
  input: PlanChatTurnInput<UI_MESSAGE>,
  rows: StoredMessage[],
): Promise<PlannedChatTurn<UI_MESSAGE>> {
  const schemas = {
    tools: input.tools,
    metadataSchema: input.metadataSchema,
    dataSchemas: input.dataSchemas,
  } as ChatSchemas<UI_MESSAGE>;
  const [incoming] = await validateChatMessages<UI_MESSAGE>([input.message], schemas, 'message');
  const { id, parts } = incoming!;
  if (!parts.some((part) => (part as { state?: unknown }).state === 'approval-responded')) {
    throw new InvalidMessageError({
      path: 'message.role',
      value: 'assistant',
      message: 'a chat turn starts with a user message, or answers a tool approval.',
    });
  }
  if (input.messageId !== undefined && input.messageId !== id) {
    throw new InvalidArgumentError({ argument: 'messageId', value: input.messageId, message: `expected ${id}.` });
  }
  const row = rows.find((candidate) => candidate.message.id === id);
  if (!row) throw new NotFoundError({ entity: 'message', id });
  if (row.message.role !== 'assistant') {
    throw new InvalidMessageError({
      path: 'message.role',
      value: 'assistant',
      message: `message ${id} is a user message.`,
    });
  }
  if (inProgress(row)) throw new ChatConflictError({ reason: 'answer-in-progress', messageId: id, status: row.status });
  const applied = applyApprovalResponses(row.message.parts as never, incoming!.parts as never);
  const newest = rows.filter((candidate) => candidate.contextState === 'eligible').at(-1);
  if (newest !== row || row.status !== 'completed' || applied.contradicted > 0) {
    throw new ChatConflictError({ reason: 'approval-not-pending', messageId: id, status: row.status });
  }
  // Every response stored already: a retry. It continues only if no result was stored after them (the request
  // that stored them ended before its model started); otherwise the answer exists.
  const awaitingRun = applied.parts.some((part) => part.state === 'approval-responded');
  if (applied.answered === 0 && (!awaitingRun || applied.pending))
    throw new ChatConflictError({ reason: 'answer-exists', messageId: id, status: row.status });

  const before = rows.filter(
    (candidate) =>
      candidate.sequence < row.sequence &&
      candidate.contextState === 'eligible' &&
      (candidate.status === 'completed' || candidate.status === 'cancelled'),
  );
  const stored = await validateStoredHistory<UI_MESSAGE>(before, schemas);
  for (const { id: invalidId, reason } of stored.invalid) {
    const why = `invalid-stored-message: ${reason}`.slice(0, 200);
    await input.history.excludeMessages(input.threadId, [invalidId], { reason: why, actor: 'chat' });
  }
  const userMessage = stored.messages.findLast((message) => message.role === 'user');
  if (!userMessage) throw new NotFoundError({ entity: 'message', id: 'the user message to answer' });
  const message = { ...toUIMessage<UI_MESSAGE>(row as never), parts: applied.parts } as unknown as UI_MESSAGE;
  return {
    userMessage,
    contextMessages: [...stored.messages, message],
    answerKey: row.clientRequestId ?? `answer:${userMessage.id}`,
    excludedMessageIds: [],
    continuation: { message, expectedParts: row.message.parts as StoredMessagePart[], pending: applied.pending },
  };
}
