import { createHash } from 'node:crypto';
import type { UIMessage } from 'ai';
import { InvalidMessageError } from '../../errors/invalid-message-error.js';
import { NotFoundError } from '../../errors/not-found-error.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import { ChatConflictError } from '../shared/chat-conflict-error.js';
import { clientRequestKey } from './client-request-key.js';
import { canonicalJson } from '../../context/engine/canonical-json.js';
import { fromUIMessage } from '../ui-messages/ui-message-mapping.js';
import { screenIncomingMessage } from '../ui-messages/screen-incoming-message.js';
import { readHistoryRows as readRows } from './read-history-rows.js';
import { validateChatMessages, type ChatSchemas } from '../ui-messages/validate-chat-messages.js';
import { validateStoredHistory } from '../ui-messages/validate-stored-history.js';
import { SUPERSEDED_BY_EDIT, SUPERSEDED_BY_REGENERATE } from './exclusion-reasons.js';
import { planApprovalContinuation } from '../approvals/plan-approval-continuation.js';
import type { PlanChatTurnInput, PlannedChatTurn } from './planned-chat-turn.js';

const inProgress = (row: StoredMessage) => row.status === 'pending' || row.status === 'streaming';
const replayable = (row: StoredMessage) =>
  row.contextState === 'eligible' && (row.status === 'completed' || row.status === 'cancelled');

/**
 * Reads the thread, refuses a duplicate or a concurrent turn (nothing written), validates the incoming message
 * with the history, then stores the user message (idempotently) and excludes what it supersedes.
 */
export async function planChatTurn<UI_MESSAGE extends UIMessage>(
  input: PlanChatTurnInput<UI_MESSAGE>,
): Promise<PlannedChatTurn<UI_MESSAGE>> {
  const { history, threadId } = input;
  let rows = await readRows(history, threadId, input.historyLimit, input.historyMaxBytes);
  const stale = rows.filter(
    (row) => inProgress(row) && row.leaseExpiresAt !== null && row.leaseExpiresAt.getTime() < Date.now(),
  );
  if (stale.length > 0) {
    await history.recoverAbandonedMessages();
    rows = await readRows(history, threadId, input.historyLimit, input.historyMaxBytes);
  }
  if (input.trigger === 'submit-message' && (input.message as { role?: unknown } | null)?.role === 'assistant')
    return planApprovalContinuation(input, rows);
  const plan =
    input.trigger === 'regenerate-message' ? await planRegenerate(input, rows) : await planSubmit(input, rows);

  const existing = rows.find((row) => row.message.role === 'assistant' && row.clientRequestId === plan.answerKey);
  if (existing) {
    const reason = inProgress(existing) ? 'answer-in-progress' : 'answer-exists';
    throw new ChatConflictError({ reason, messageId: existing.message.id, status: existing.status });
  }
  const running = rows.find((row) => row.message.role === 'assistant' && inProgress(row));
  if (running)
    throw new ChatConflictError({
      reason: 'answer-in-progress',
      messageId: running.message.id,
      status: running.status,
    });

  const schemas = {
    tools: input.tools,
    metadataSchema: input.metadataSchema,
    dataSchemas: input.dataSchemas,
  } as ChatSchemas<UI_MESSAGE>;
  // A stored message that fails today's schemas never refuses the turn: it leaves the context, recorded.
  const stored = await validateStoredHistory<UI_MESSAGE>(plan.history, schemas);
  for (const { id, reason } of stored.invalid) {
    const why = `invalid-stored-message: ${reason}`.slice(0, 200);
    await history.excludeMessages(threadId, [id], { reason: why, actor: 'chat' });
  }
  const contextMessages = [...stored.messages, ...(plan.newMessage ? [plan.newMessage] : [])];
  const userMessage = contextMessages.at(-1);
  if (userMessage?.role !== 'user') {
    throw new InvalidMessageError({
      path: 'history',
      value: stored.invalid.at(-1)?.id,
      message: 'the message to answer is invalid.',
    });
  }

  if (plan.newMessage) {
    const { created, stored } = await history.appendMessage(threadId, fromUIMessage(userMessage), {
      clientRequestId: clientRequestKey(input.requestId),
    });
    if (!created && canonicalJson(stored.message.parts) !== canonicalJson(fromUIMessage(userMessage).parts)) {
      throw new ChatConflictError({ reason: 'message-id-reused', messageId: userMessage.id, status: stored.status });
    }
  }
  if (plan.supersede.length > 0) {
    await history.excludeMessages(threadId, plan.supersede, { reason: plan.reason, actor: 'chat' });
  }
  return { userMessage, contextMessages, answerKey: plan.answerKey, excludedMessageIds: plan.supersede };
}

interface Plan<UI_MESSAGE extends UIMessage> {
  history: StoredMessage[];
  newMessage?: UI_MESSAGE;
  answerKey: string;
  supersede: string[];
  reason: string;
}

async function planSubmit<UI_MESSAGE extends UIMessage>(
  input: PlanChatTurnInput<UI_MESSAGE>,
  rows: StoredMessage[],
): Promise<Plan<UI_MESSAGE>> {
  const { message } = input;
  if (typeof message !== 'object' || message === null) {
    throw new InvalidMessageError({
      path: 'message',
      value: message,
      message: 'expected the new user message (a UIMessage).',
    });
  }
  if ((message as { role?: unknown }).role !== 'user') {
    throw new InvalidMessageError({
      path: 'message.role',
      value: (message as { role?: unknown }).role,
      message: 'a chat turn starts with a user message, or answers a tool approval.',
    });
  }
  const schemas = {
    tools: input.tools,
    metadataSchema: input.metadataSchema,
    dataSchemas: input.dataSchemas,
  } as ChatSchemas<UI_MESSAGE>;
  const [validated] = await validateChatMessages<UI_MESSAGE>([message], schemas, 'message');
  const incoming = screenIncomingMessage(validated!, input);
  if (input.messageId === undefined) {
    const stored = rows.find((row) => row.message.id === incoming!.id);
    const before = stored ? rows.filter((row) => row.sequence < stored.sequence) : rows;
    return {
      history: before.filter(replayable),
      newMessage: incoming,
      answerKey: `answer:${incoming!.id}`,
      supersede: [],
      reason: '',
    };
  }
  // An edit: the edited message and everything after it are superseded by the new version.
  const target = resolveEdited(rows, input.messageId);
  const digest = createHash('sha256').update(canonicalJson(incoming!.parts)).digest('hex').slice(0, 16);
  const answerKey = `edit:${target.message.id}:${digest}`;
  const taken = rows.some((row) => row.message.id === incoming!.id);
  const newMessage = taken ? ({ ...incoming!, id: input.generateMessageId() } as UI_MESSAGE) : incoming!;
  const supersede = rows
    .filter((row) => row.sequence >= target.sequence && row.contextState === 'eligible')
    .map((row) => row.message.id);
  return {
    history: rows.filter((row) => row.sequence < target.sequence && replayable(row)),
    newMessage,
    answerKey,
    supersede,
    reason: `${SUPERSEDED_BY_EDIT}:${newMessage.id}`,
  };
}

/** Follows `superseded-by-edit:<new id>` links, so that editing a message twice edits its latest version. */
function resolveEdited(rows: StoredMessage[], messageId: string): StoredMessage {
  let row = rows.find((candidate) => candidate.message.id === messageId);
  for (
    let hops = 0;
    row && row.contextState === 'excluded' && row.exclusionReason?.startsWith(`${SUPERSEDED_BY_EDIT}:`) && hops < 100;
    hops++
  ) {
    const next = row.exclusionReason.slice(SUPERSEDED_BY_EDIT.length + 1);
    row = rows.find((candidate) => candidate.message.id === next);
  }
  if (!row || row.message.role !== 'user') throw new NotFoundError({ entity: 'message', id: messageId });
  return row;
}

async function planRegenerate<UI_MESSAGE extends UIMessage>(
  input: PlanChatTurnInput<UI_MESSAGE>,
  rows: StoredMessage[],
): Promise<Plan<UI_MESSAGE>> {
  const eligible = rows.filter((row) => row.contextState === 'eligible');
  let target: StoredMessage | undefined;
  if (input.messageId !== undefined) {
    target = rows.find((row) => row.message.id === input.messageId);
    if (!target) throw new NotFoundError({ entity: 'message', id: input.messageId });
    if (target.contextState === 'excluded' && target.message.role === 'assistant') {
      // Regenerated already: the answer with this key (if any) is the conflict planChatTurn reports.
      const answered = rows.find((row) => row.clientRequestId === `regenerate:${target!.message.id}`);
      if (answered) return { history: [], answerKey: `regenerate:${target.message.id}`, supersede: [], reason: '' };
    }
  } else {
    target = eligible.at(-1);
  }
  if (!target) throw new NotFoundError({ entity: 'message', id: input.messageId ?? 'last message' });
  const user =
    target.message.role === 'user'
      ? target
      : eligible.filter((row) => row.message.role === 'user' && row.sequence < target!.sequence).at(-1);
  if (!user) throw new NotFoundError({ entity: 'message', id: 'the user message to answer' });
  const supersede = eligible
    .filter((row) => row.sequence > user.sequence && row.sequence >= target!.sequence)
    .map((row) => row.message.id);
  return {
    history: rows.filter((row) => row.sequence <= user.sequence && (replayable(row) || row === user)),
    answerKey:
      target.message.role === 'assistant'
        ? `regenerate:${target.message.id}`
        : `answer:${user.message.id}:${rows.length}`,
    supersede,
    reason: SUPERSEDED_BY_REGENERATE,
  };
}
