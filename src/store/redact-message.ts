import { and, eq, gte, lte, sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import { recordAudit } from './audit.js';
import { countPartTokens } from './count-part-tokens.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertThreadId, requireThread } from './threads.js';
import type { StoredMessage } from './types.js';

export interface RedactMessageOptions {
  /**
   * The secrets to cut out, wherever they occur in the message's parts and metadata (also in the thread's title
   * and metadata). Leave out to redact the whole message.
   */
  spans?: string[];
  /** What replaces each span, or the whole text. @default '[redacted]' */
  replacement?: string;
  /** Who asked for it; audited. */
  actor: string;
  /** Why; audited. */
  reason: string;
}

/** Replaces every occurrence of the spans in every string (keys included) of a JSON value. */
export function replaceSpans<VALUE>(value: VALUE, spans: readonly string[], replacement: string): VALUE {
  const scrub = (text: string) => spans.reduce((result, span) => result.split(span).join(replacement), text);
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return scrub(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item && typeof item === 'object') return Object.fromEntries(Object.entries(item).map(([key, inner]) => [scrub(key), walk(inner)]));
    return item;
  };
  return walk(value) as VALUE;
}

/**
 * Redacts a message: the text in its parts and metadata is replaced (whole message, or the given spans), its
 * context state becomes `redacted`, `content_version` goes up by one, an audit event records who and why
 * (never what), and every summary covering it is marked stale with its content wiped, every snapshot covering
 * it stale. Afterwards the secret is in no table (the search vector is regenerated from the new parts).
 */
export function redactMessage(context: StoreContext, threadId: string, messageId: string, options: RedactMessageOptions): Promise<StoredMessage> {
  const thread = assertThreadId(threadId);
  const { spans, replacement = '[redacted]', actor, reason } = options;
  if (spans !== undefined && (!Array.isArray(spans) || spans.length === 0 || spans.some((span) => typeof span !== 'string' || span.length === 0))) {
    throw new InvalidArgumentError({ argument: 'options.spans', value: spans, message: 'expected a non-empty array of non-empty strings.' });
  }
  if (typeof actor !== 'string' || actor.length === 0) throw new InvalidArgumentError({ argument: 'options.actor', value: actor, message: 'expected a non-empty string.' });
  if (typeof reason !== 'string' || reason.length === 0) throw new InvalidArgumentError({ argument: 'options.reason', value: reason, message: 'expected a non-empty string.' });
  if (spans?.some((span) => replacement.includes(span))) {
    throw new InvalidArgumentError({ argument: 'options.replacement', value: replacement, message: 'must not contain a span it replaces.' });
  }
  const { agentMessage, agentSummary, agentContextSnapshot, agentThread } = context.tables;
  return inTenant(context, async (tx) => {
    const threadRow = await requireThread(context, tx, thread, { lock: true });
    const [row] = await tx
      .select(messageColumns(context.tables))
      .from(agentMessage)
      .where(and(eq(agentMessage.tenantId, context.tenantId), eq(agentMessage.threadId, thread), eq(agentMessage.messageId, String(messageId))))
      .for('update');
    if (!row) throw new NotFoundError({ entity: 'message', id: messageId });

    const parts: StoredMessagePart[] =
      spans === undefined
        ? row.role === 'assistant' && row.parts.length === 0
          ? []
          : [{ type: 'text', text: replacement }]
        : replaceSpans(row.parts, spans, replacement);
    const metadata: StoredMetadata = spans === undefined ? {} : replaceSpans(row.metadata, spans, replacement);
    const [updated] = await tx
      .update(agentMessage)
      .set({
        parts,
        metadata,
        contextState: 'redacted',
        exclusionReason: null,
        contentVersion: sql`${agentMessage.contentVersion} + 1`,
        byteSize: Buffer.byteLength(JSON.stringify(parts)) + Buffer.byteLength(JSON.stringify(metadata)),
        tokenCount: countPartTokens(parts, context.tokenCounter),
        tokenCounterId: context.tokenCounter.id,
        redactedAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(and(eq(agentMessage.tenantId, context.tenantId), eq(agentMessage.id, row.id)))
      .returning(messageColumns(context.tables));

    if (spans !== undefined) {
      const title = threadRow.title === null ? null : replaceSpans(threadRow.title, spans, replacement);
      const threadMetadata = replaceSpans(threadRow.metadata, spans, replacement);
      await tx
        .update(agentThread)
        .set({ title, metadata: threadMetadata })
        .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, thread)));
    }
    // A summary may paraphrase the secret, so a covering summary is wiped, not just flagged.
    const staleSummaries = await tx
      .update(agentSummary)
      .set({ stale: true, content: '[summary withdrawn: a covered message was redacted]', updatedAt: sql`now()` })
      .where(
        and(
          eq(agentSummary.tenantId, context.tenantId),
          eq(agentSummary.threadId, thread),
          lte(agentSummary.fromSequence, row.sequence),
          gte(agentSummary.throughSequence, row.sequence),
        ),
      )
      .returning({ id: agentSummary.id });
    const staleSnapshots = await tx
      .update(agentContextSnapshot)
      .set({ stale: true })
      .where(
        and(
          eq(agentContextSnapshot.tenantId, context.tenantId),
          eq(agentContextSnapshot.threadId, thread),
          gte(agentContextSnapshot.throughSequence, row.sequence),
        ),
      )
      .returning({ id: agentContextSnapshot.id });
    await recordAudit(context, tx, {
      action: 'message-redacted',
      actor,
      reason,
      threadId: thread,
      messageRowId: row.id,
      details: {
        mode: spans === undefined ? 'whole-message' : 'spans',
        spanCount: spans?.length ?? 0,
        contentVersion: updated!.contentVersion,
        staleSummaries: staleSummaries.length,
        staleSnapshots: staleSnapshots.length,
      },
    });
    return toStoredMessage(updated!);
  });
}
