import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import type { MessageStatus, StoredMessage } from '../model/stored-rows.js';
import type { KeptToolPayload } from './fit-assistant-parts.js';
import { callInOneStatement, fromColumnNames, IN_TRANSACTION, THREAD_MISSING } from './one-statement-call.js';
import { messageColumns, toStoredMessage, type MessageRow } from './row-mapping.js';
import type { StoreContext } from './store-context.js';
import { referencedPayloadKeys } from './tool-payload-rows.js';
import type { CheckedRunFinish } from './run-finish.js';

/** What a checkpoint (`streaming`) or a finalize (a final status) writes to an assistant message. */
export interface AnswerWrite {
  thread: string;
  messageId: string;
  status: Extract<MessageStatus, 'streaming' | 'completed' | 'failed' | 'cancelled'>;
  parts: StoredMessagePart[];
  /** Replaces the stored metadata; undefined keeps it. */
  metadata: StoredMetadata | undefined;
  byteSize: number;
  tokenCount: number | null;
  tokenCounterId: string | null;
  partTokenCounts: readonly number[] | null;
  leaseExpiresAt: Date | null;
  /** Payloads to store in `agent_tool_payload`: a write with any takes the transaction path. */
  kept: readonly KeptToolPayload[];
  /** A finalize's run, finished in the same statement with the message's status. */
  run?: CheckedRunFinish | null;
}

/**
 * Writes an answer's checkpoint or finalize in one statement (`agent_history_write_answer`): the message row and the
 * delete of the tool payload rows its parts no longer refer to. Returns the stored message, null when no message was
 * written (missing, no longer pending or streaming, redacted, or its run not the thread's: the transaction path
 * tells which), or
 * {@link IN_TRANSACTION} when the write must be done in a transaction (payloads to store, the caller's transaction,
 * Citus).
 */
export async function writeAnswerInOneStatement(
  context: StoreContext,
  write: AnswerWrite,
): Promise<StoredMessage | null | typeof IN_TRANSACTION> {
  if (write.kept.length > 0) return IN_TRANSACTION;
  await context.checkRowLevelSecurity();
  const rows = await callInOneStatement<Record<string, unknown>>(context, 'agent_history_write_answer', [
    { uuid: write.thread },
    { text: write.messageId },
    { text: write.status },
    { json: JSON.stringify(write.parts) },
    { jsonb: write.metadata === undefined ? null : JSON.stringify(write.metadata) },
    { integer: write.byteSize },
    { integer: write.tokenCount },
    { text: write.tokenCounterId },
    { integers: write.partTokenCounts },
    { timestamptz: write.leaseExpiresAt },
    { texts: referencedPayloadKeys(write.parts) },
    { boolean: context.search !== 'inline' },
    { jsonb: write.run ? runJson(write.run) : null },
  ]);
  if (rows === IN_TRANSACTION) return rows;
  const [row] = rows === THREAD_MISSING ? [] : rows;
  return row ? toStoredMessage(fromColumnNames<MessageRow>(messageColumns(context.tables), row)) : null;
}

/** The run's finish as the function reads it (its status is the message's). */
function runJson({ id, error, finishReason, provider, model, ...usage }: CheckedRunFinish): string {
  return JSON.stringify({
    id,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    reasoning_tokens: usage.reasoningTokens,
    cached_input_tokens: usage.cachedInputTokens,
    error,
    finish_reason: finishReason,
    provider,
    model,
  });
}
