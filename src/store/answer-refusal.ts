import { and, eq, inArray, ne } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { ofThread } from './of-thread.js';
import type { inTenant, StoreContext } from './store-context.js';

/** Why an answer's checkpoint or finalize wrote nothing, read in the caller's transaction: the error to throw. */
export async function explainMissing(
  context: StoreContext,
  tx: Parameters<Parameters<typeof inTenant>[1]>[0],
  threadId: string,
  messageId: string,
  verb: string,
) {
  const { agentMessage } = context.tables;
  const [existing] = await tx
    .select({ status: agentMessage.status, contextState: agentMessage.contextState })
    .from(agentMessage)
    .where(and(ofThread(context, agentMessage, threadId), eq(agentMessage.messageId, messageId)));
  if (!existing) return new NotFoundError({ entity: 'message', id: messageId });
  if (existing.contextState === 'redacted' && (existing.status === 'pending' || existing.status === 'streaming')) {
    return new InvalidArgumentError({
      argument: 'messageId',
      value: messageId,
      message: 'the message was redacted while it was being written; it takes no more content.',
    });
  }
  return new InvalidArgumentError({
    argument: 'messageId',
    value: messageId,
    message: `the message is ${existing.status}; only a pending or streaming message can be ${verb}.`,
  });
}

/** The assistant message `id` while its writer may still change it: pending or streaming, and not redacted. */
export function stillStreaming(context: StoreContext, thread: string, id: string) {
  const { agentMessage } = context.tables;
  return and(
    ofThread(context, agentMessage, thread),
    eq(agentMessage.messageId, id),
    inArray(agentMessage.status, ['pending', 'streaming']),
    // A message redacted while it streams takes no more content: the writer would undo the redaction.
    ne(agentMessage.contextState, 'redacted'),
  );
}
