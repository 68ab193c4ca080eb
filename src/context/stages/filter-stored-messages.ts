import type { ContextMessage } from '../../model/context-store.js';
import type { MessageStatus } from '../../model/stored-rows.js';
import { isToolUIPart, type ContextUIPart } from '../../model/context-ui-message.js';
import type { ClosedToolCall, FilterStageReport } from '../contracts/stage-reports.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';

/** Options of {@link filterStoredMessages}. */
export interface FilterStoredMessagesOptions {
  /** The messages to filter, oldest first. */
  messages: readonly ContextMessage[];
  /**
   * The statuses an assistant message may have to reach the model. `pending` and `streaming` messages belong
   * to a writer that is still running (or crashed and awaits recovery) and are left out.
   * @default ['completed', 'cancelled', 'failed']
   */
  assistantStatuses?: readonly MessageStatus[];
}

/**
 * Stage 3: keeps what may reach the model. Leaves out soft-deleted, `excluded` and `redacted` messages,
 * system messages (instructions come from the application, and `streamText` rejects system messages),
 * and assistant messages whose status is not in `assistantStatuses`.
 *
 * Then it closes every tool call that cannot be completed any more, so that no call reaches the model
 * without a result (`MissingToolResultsError`) and none is dropped silently: an `input-streaming`,
 * `input-available` or preliminary call becomes an `output-error` part whose text says why. An approval is
 * closed only when a newer user message supersedes it: a request nobody answered becomes `output-error`, an
 * approved one `output-error` (approved, never run); a denied one is kept (its result is `execution-denied`). Approvals after the newest user message,
 * awaiting their answer or answered, are unfinished tool work and are kept as they are (the AI SDK keeps
 * them too). Idempotent.
 */
export function filterStoredMessages({
  messages,
  assistantStatuses = ['completed', 'cancelled', 'failed'],
}: FilterStoredMessagesOptions): { messages: ContextMessage[]; report: FilterStageReport } {
  const removed: ContextRemoval[] = [];
  const kept: ContextMessage[] = [];
  for (const stored of messages) {
    const reason =
      stored.deletedAt != null
        ? 'message-deleted'
        : stored.contextState === 'excluded'
          ? 'message-excluded'
          : stored.contextState === 'redacted'
            ? 'message-redacted'
            : stored.message.role === 'system'
              ? 'message-system'
              : stored.message.role === 'assistant' && !assistantStatuses.includes(stored.status)
                ? 'message-unfinished'
                : undefined;
    // The answer being begun (pending, no parts yet) is not history the model loses: it is left out unreported.
    const placeholder = stored.status === 'pending' && stored.message.parts.length === 0;
    if (reason && !(reason === 'message-unfinished' && placeholder))
      removed.push({ sequence: stored.sequence, reason, tokens: stored.tokenCount ?? 0 });
    else if (!reason) kept.push(stored);
  }
  const lastUserSequence = kept.reduce(
    (last, stored) => (stored.message.role === 'user' ? Math.max(last, stored.sequence) : last),
    0,
  );
  const closedToolCalls: ClosedToolCall[] = [];
  const result = kept.map((stored) => {
    if (stored.message.role !== 'assistant') return stored;
    // Built only from the first part it closes (most messages have none to close).
    let parts: ContextUIPart[] | undefined;
    const original = stored.message.parts;
    for (let index = 0; index < original.length; index++) {
      const part = original[index]!;
      const closed = closeToolPart(part, stored.status, stored.sequence < lastUserSequence);
      if (closed === part) {
        parts?.push(part);
        continue;
      }
      parts ??= original.slice(0, index);
      parts.push(closed);
      closedToolCalls.push({
        sequence: stored.sequence,
        toolCallId: String(part.toolCallId),
        previousState: String(part.state),
      });
    }
    // Changed here, it is no longer the row's content: no row id, so no cache keeps it under the row's key.
    return parts
      ? { ...stored, message: { ...stored.message, parts }, tokenCount: null, tokenCounterId: null, rowId: undefined }
      : stored;
  });
  return {
    messages: result,
    report: { stage: 'filter', removed, closedToolCalls, tokensSaved: sumRemovedTokens(removed) },
  };
}

function closeToolPart(part: ContextUIPart, status: MessageStatus, supersededByUser: boolean): ContextUIPart {
  if (!isToolUIPart(part)) return part;
  switch (part.state) {
    case 'input-streaming':
    case 'input-available':
      return closedWithError(part, `The tool call did not complete: ${unfinishedCause(status)}`);
    case 'output-available':
      return part.preliminary === true
        ? closedWithError(part, 'The tool call did not complete: only a preliminary result was recorded.')
        : part;
    case 'approval-requested':
      // Still awaiting its answer: kept as it is, as the AI SDK's `convertToModelMessages` keeps it.
      if (!supersededByUser) return part;
      return closedWithError(part, 'The tool call was not run: approval was requested but never given.');
    case 'approval-responded':
      // A denial is sent as it is: the call's result is then `execution-denied`, as the AI SDK sends it.
      if (!supersededByUser || (part.approval as { approved?: boolean } | undefined)?.approved === false) return part;
      return closedWithError(part, 'The tool call was approved but never run: the conversation moved on first.');
    default:
      return part;
  }
}

// The part without its result fields (made only for a part that is closed).
function withoutResult(part: ContextUIPart) {
  const {
    approval,
    preliminary: _preliminary,
    output: _output,
    ...rest
  } = part as ContextUIPart & { approval?: { approved?: boolean; reason?: string } };
  return { approval, rest };
}

function closedWithError(part: ContextUIPart, errorText: string): ContextUIPart {
  return {
    ...withoutResult(part).rest,
    state: 'output-error',
    input: (part as { input?: unknown }).input ?? null,
    errorText,
  } as ContextUIPart;
}

function unfinishedCause(status: MessageStatus): string {
  if (status === 'cancelled') return 'the response was cancelled before the result arrived.';
  if (status === 'failed') return 'the response failed before the result arrived.';
  return 'no result was recorded.';
}
