import type { UIMessage } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { StoredMessagePart } from '../../schema/define-agent-tables.js';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { StoredMessage } from '../../model/stored-rows.js';
import { getActiveTurn } from './active-turns.js';
import { settleInterruptedParts } from '../answer/settle-interrupted-parts.js';

/** Options of {@link stopChat}. */
export interface StopChatOptions {
  /** The tenant's store. */
  history: TenantHistory;
  /** The thread whose answer in progress is stopped. */
  threadId: string;
}

/**
 * Stops the answer being written in a thread and keeps what was streamed so far, stored as `cancelled`.
 * In the process that streams it, the model call is aborted at once and the stored answer holds every part
 * sent. From another process, the answer is finalized from its last checkpoint and the streaming process stops
 * at its next step. Returns the stopped answer, or null when nothing was streaming.
 *
 * useChat's `stop()` only closes the connection (the answer then goes on, see `onDisconnect`): call this from
 * a stop endpoint as well.
 */
export async function stopChat({ history, threadId }: StopChatOptions): Promise<StoredMessage | null> {
  const active = getActiveTurn(history.tenantId, threadId);
  if (active) {
    await history.getThread(threadId); // the same NotFoundError as everywhere for a foreign thread
    active.abort();
    return await active.done;
  }
  const page = await history.listMessages(threadId, { limit: 20, roles: ['assistant'] });
  const streaming = page.messages.find((row) => row.status === 'pending' || row.status === 'streaming');
  if (!streaming) return null;
  try {
    const stored = await history.finalizeMessage(threadId, streaming.message.id, {
      status: 'cancelled',
      parts: settleInterruptedParts(streaming.message.parts as UIMessage['parts']) as StoredMessagePart[],
      metadata: streaming.message.metadata as Record<string, unknown> | undefined,
    });
    if (streaming.runId) await history.finishRun(streaming.runId, { status: 'cancelled' });
    return stored;
  } catch (error) {
    // It finished meanwhile: that is the answer.
    if (error instanceof InvalidArgumentError) return await history.getMessage(threadId, streaming.message.id);
    throw error;
  }
}
