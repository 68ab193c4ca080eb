import { and, eq, ne, or, sql } from 'drizzle-orm';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import type { StoreContext } from './store-context.js';

/**
 * A redaction's part in memory, in its transaction: every recall entry of the message row goes (its text and its
 * embedding); a fact derived from it goes with a whole-message redaction, and is scrubbed with spans (its embedding
 * dropped, since it was made from the secret). With spans, every other memory item of the message's user or thread
 * that holds a span (a working-memory document, a fact of another source) is scrubbed too. Returns the counts, for
 * the audit event.
 */
export async function forgetDerivedMemory(
  context: StoreContext,
  tx: TenantTransaction,
  message: { id: string; threadId: string; userId: string | null },
  { spans, replacement }: { spans: string[] | undefined; replacement: string },
): Promise<{ memoryDeleted: number; memoryScrubbed: number }> {
  const { agentMemory } = context.tables;
  const ofMessage = and(eq(agentMemory.tenantId, context.tenantId), eq(agentMemory.sourceMessageId, message.id));
  const deleted = await tx
    .delete(agentMemory)
    .where(and(ofMessage, spans === undefined ? undefined : eq(agentMemory.kind, 'recall')))
    .returning({ id: agentMemory.id });
  if (spans === undefined) return { memoryDeleted: deleted.length, memoryScrubbed: 0 };
  // Nested replace() calls, one per span, in the order given (as replaceSpans does in the message's parts).
  const scrubbed = spans.reduce<ReturnType<typeof sql>>(
    (text, span) => sql`replace(${text}, ${span}, ${replacement})`,
    sql`${agentMemory.content}`,
  );
  const holdsSpan = or(...spans.map((span) => sql`strpos(${agentMemory.content}, ${span}) > 0`));
  const owner =
    message.userId === null
      ? eq(agentMemory.threadId, message.threadId)
      : or(eq(agentMemory.userId, message.userId), eq(agentMemory.threadId, message.threadId));
  const changed = await tx
    .update(agentMemory)
    .set({
      content: scrubbed,
      embedding: null,
      embeddingModel: null,
      version: sql`${agentMemory.version} + 1`,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(agentMemory.tenantId, context.tenantId),
        ne(agentMemory.kind, 'recall'),
        or(eq(agentMemory.sourceMessageId, message.id), and(owner, holdsSpan)),
      ),
    )
    .returning({ id: agentMemory.id });
  return { memoryDeleted: deleted.length, memoryScrubbed: changed.length };
}
