import { threadContextCache } from './thread-context-store.js';
import { and, asc, eq, gte, lte, or, sql } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { StoredMessagePart, StoredMetadata } from '../schema/define-agent-tables.js';
import { recordAudit } from './audit.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { inTenant, type StoreContext } from './store-context.js';
import { storedTokenCount } from './stored-token-count.js';
import { assertThreadId } from '../errors/assert-input.js';
import { requireThread } from './require-thread.js';
import type { StoredMessage } from '../model/stored-rows.js';
import { lockForkFamily } from './fork-family.js';
import { replaceSpans } from './replace-spans.js';
import { scrubThreadSpans } from './scrub-thread-spans.js';
import { ofThread } from './of-thread.js';
import { forgetDerivedMemory } from './forget-derived-memory.js';
import { clearTitlesFrom } from './generated-title.js';
import { redactToolPayloads, withRedactedPreviews, type RedactedPreviews } from './redact-tool-payloads.js';

/** The options of `redactMessage`. */
export interface RedactMessageOptions {
  /**
   * The secrets to cut out, wherever they occur in the message's parts and metadata (also in the thread's title
   * and metadata and its runs' errors and metadata). Leave out to redact the whole message.
   * @default the whole message
   */
  spans?: string[];
  /** What replaces each span, or the whole text. @default '[redacted]' */
  replacement?: string;
  /** Who asked for it; audited. */
  actor: string;
  /** Why; audited. */
  reason: string;
}

/**
 * Redacts a message: the text in its parts and metadata is replaced (whole message, or the given spans), its
 * context state becomes `redacted`, `content_version` goes up by one, an audit event records who and why
 * (never what), every summary covering it is marked stale with its content wiped, and every snapshot covering
 * it is marked stale, a title generated from it is cleared, and the memory derived from it is
 * deleted or scrubbed (`forgetDerivedMemory`). The same is done to its copies: the original and every copy a fork made of it (through any
 * chain of forks, whatever threads were deleted since), and only those. Afterwards the secret is in no table (the
 * search vector is regenerated from the new parts).
 */
export async function redactMessage(
  context: StoreContext,
  threadId: string,
  messageId: string,
  options: RedactMessageOptions,
): Promise<StoredMessage> {
  const thread = assertThreadId(threadId);
  const { spans, replacement = '[redacted]', actor, reason } = options;
  assertRedactOptions({ spans, replacement, actor, reason });
  const { agentMessage } = context.tables;
  return inTenant(context, async (tx) => {
    await requireThread(context, tx, thread);
    // The whole family is locked first, in one order, so that no fork copies from it while the copies change.
    const family = await lockForkFamily(context, tx, thread);
    const [row] = await tx
      .select(messageColumns(context.tables))
      .from(agentMessage)
      .where(and(ofThread(context, agentMessage, thread), eq(agentMessage.messageId, String(messageId))));
    if (!row) throw new NotFoundError({ entity: 'message', id: messageId });

    // The copies a fork made: every row of the message's lineage (the original and the copies of it, whichever
    // thread they are in now), never a message of the same id that was appended on its own.
    const lineage = row.sourceMessageId ?? row.id;
    const copies = await tx
      .select(messageColumns(context.tables))
      .from(agentMessage)
      .where(
        and(
          eq(agentMessage.tenantId, context.tenantId),
          or(eq(agentMessage.id, lineage), eq(agentMessage.sourceMessageId, lineage)),
        ),
      )
      .orderBy(asc(agentMessage.id))
      .for('update');
    let redactedOriginal: StoredMessage | undefined;
    for (const target of copies) {
      // Its payloads kept whole in agent_tool_payload: deleted, or scrubbed with new previews for the parts.
      const previews = await redactToolPayloads(context, tx, target.id, { spans, replacement });
      const redacted = await redactRow(context, tx, target, { spans, replacement, previews });
      // This process's converted copy of the message goes now (another process drops its own on its next load).
      threadContextCache(context, target.threadId)?.withdraw(target.id);
      const staleness = await invalidateDerived(context, tx, target, { spans, replacement });
      // The chunk log of an answer still streaming holds its text as sent: a redaction leaves none of it.
      await tx
        .delete(context.tables.agentStreamChunk)
        .where(
          and(
            eq(context.tables.agentStreamChunk.tenantId, context.tenantId),
            eq(context.tables.agentStreamChunk.messageId, target.id),
          ),
        );
      await recordAudit(context, tx, {
        action: 'message-redacted',
        actor,
        reason,
        threadId: target.threadId,
        messageRowId: target.id,
        details: {
          mode: spans === undefined ? 'whole-message' : 'spans',
          spanCount: spans?.length ?? 0,
          contentVersion: redacted.contentVersion,
          forkCopy: target.id !== row.id,
          ...staleness,
        },
      });
      if (target.id === row.id) redactedOriginal = redacted;
    }
    // A fork made before the message holds no copy of it, but it copied the thread's title and metadata: with
    // spans, those threads are scrubbed too, so the secret is left in no thread of the family.
    if (spans !== undefined) {
      const withCopy = new Set(copies.map((copy) => copy.threadId));
      for (const familyThread of family)
        if (!withCopy.has(familyThread)) await scrubThreadSpans(context, tx, familyThread, spans, replacement);
    }
    // A title generated from the message (by the chat route, or by `renameThread` with `derivedFrom`) quotes or
    // paraphrases it: cleared in every thread of the family, whatever the mode.
    await clearTitlesFrom(context, tx, family, String(messageId));
    return redactedOriginal!;
  });
}

type MessageRow = Parameters<typeof toStoredMessage>[0];

/** The checks of {@link redactMessage}'s options, each an {@link InvalidArgumentError} naming the option and value. */
function assertRedactOptions({
  spans,
  replacement,
  actor,
  reason,
}: Required<Omit<RedactMessageOptions, 'spans'>> & Pick<RedactMessageOptions, 'spans'>): void {
  if (
    spans !== undefined &&
    (!Array.isArray(spans) || spans.length === 0 || spans.some((span) => typeof span !== 'string' || span.length === 0))
  ) {
    throw new InvalidArgumentError({
      argument: 'options.spans',
      value: spans,
      message: 'expected a non-empty array of non-empty strings.',
    });
  }
  if (typeof actor !== 'string' || actor.length === 0)
    throw new InvalidArgumentError({
      argument: 'options.actor',
      value: actor,
      message: 'expected a non-empty string.',
    });
  if (typeof reason !== 'string' || reason.length === 0)
    throw new InvalidArgumentError({
      argument: 'options.reason',
      value: reason,
      message: 'expected a non-empty string.',
    });
  if (
    typeof replacement !== 'string' ||
    replacement.length > 1000 ||
    replacement.includes('\u0000') ||
    !replacement.isWellFormed()
  ) {
    throw new InvalidArgumentError({
      argument: 'options.replacement',
      value: replacement,
      message: 'expected a string of at most 1000 characters, without NUL or lone surrogates.',
    });
  }
  if (spans?.some((span) => replacement.includes(span))) {
    throw new InvalidArgumentError({
      argument: 'options.replacement',
      value: replacement,
      message: 'must not contain a span it replaces.',
    });
  }
}

async function redactRow(
  context: StoreContext,
  tx: TenantTransaction,
  row: MessageRow,
  { spans, replacement, previews }: { spans: string[] | undefined; replacement: string; previews: RedactedPreviews },
): Promise<StoredMessage> {
  const { agentMessage } = context.tables;
  const parts: StoredMessagePart[] =
    spans === undefined
      ? row.role === 'assistant' && row.parts.length === 0
        ? []
        : [{ type: 'text', text: replacement }]
      : withRedactedPreviews(replaceSpans(row.parts, spans, replacement), previews);
  const metadata: StoredMetadata = spans === undefined ? {} : replaceSpans(row.metadata, spans, replacement);
  const counted = await storedTokenCount(context, { id: row.messageId, role: row.role, parts });
  const [updated] = await tx
    .update(agentMessage)
    .set({
      parts,
      metadata,
      contextState: 'redacted',
      exclusionReason: null,
      contentVersion: sql`${agentMessage.contentVersion} + 1`,
      byteSize: Buffer.byteLength(JSON.stringify(parts)) + Buffer.byteLength(JSON.stringify(metadata)),
      ...counted,
      redactedAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where(and(eq(agentMessage.tenantId, context.tenantId), eq(agentMessage.id, row.id)))
    .returning(messageColumns(context.tables));
  return toStoredMessage(updated!);
}

/**
 * Withdraws what was derived from the message in one thread: covering summaries are wiped and marked stale
 * (a summary may paraphrase the secret), covering snapshots marked stale, its memory deleted or scrubbed. With spans, the thread's title and
 * metadata, its runs' errors and metadata and the snapshots' JSON are scrubbed too.
 */
async function invalidateDerived(
  context: StoreContext,
  tx: TenantTransaction,
  message: MessageRow,
  { spans, replacement }: { spans: string[] | undefined; replacement: string },
) {
  const { threadId, sequence } = message;
  const { agentSummary, agentContextSnapshot } = context.tables;
  const staleSummaries = await tx
    .update(agentSummary)
    .set({ stale: true, content: '[summary withdrawn: a covered message was redacted]', updatedAt: sql`now()` })
    .where(
      and(
        ofThread(context, agentSummary, threadId),
        lte(agentSummary.fromSequence, sequence),
        gte(agentSummary.throughSequence, sequence),
      ),
    )
    .returning({ id: agentSummary.id });
  const staleSnapshots = await tx
    .update(agentContextSnapshot)
    .set({ stale: true })
    .where(and(ofThread(context, agentContextSnapshot, threadId), gte(agentContextSnapshot.throughSequence, sequence)))
    .returning({ id: agentContextSnapshot.id });
  if (spans !== undefined) await scrubThreadSpans(context, tx, threadId, spans, replacement);
  const memory = await forgetDerivedMemory(context, tx, message, { spans, replacement });
  return { staleSummaries: staleSummaries.length, staleSnapshots: staleSnapshots.length, ...memory };
}
