import { and, eq, sql } from 'drizzle-orm';
import {
  assertInteger,
  assertOptionalText,
  assertThreadId,
  assertUuid,
  assertOptionalUserId,
} from '../errors/assert-input.js';
import type { StoredThread } from '../model/stored-rows.js';
import { requireThread } from './require-thread.js';
import { threadColumns, toStoredThread } from './row-mapping.js';
import { inTenant, type StoreContext } from './store-context.js';
import { scopedUserId } from './threads.js';
import { withoutTitleSources } from './generated-title.js';
import { copyToolPayloads } from './tool-payload-rows.js';

/** The options of `forkThread`. */
export interface ForkThreadOptions {
  /** The last sequence copied: the fork holds messages `1..atSequence` (0 forks an empty thread). */
  atSequence: number;
  /** The new thread's id: a uuid. @default a random uuid */
  id?: string;
  /** The new thread's title. @default the source thread's title */
  title?: string;
  /** The new thread's user. @default the source thread's user */
  userId?: string;
}

/**
 * A new thread holding copies of the messages 1..`atSequence` of `threadId` (same ids, parts, states and
 * sequences); the new thread continues from `atSequence + 1`. The source is untouched. Each copy records the
 * original row it stands for (`source_message_id`) and the new thread its family's root (`root_thread_id`), so a
 * redaction reaches every copy however many forks lie between them and whichever of those were deleted.
 */
export function forkThread(
  context: StoreContext,
  threadId: string,
  { atSequence, id, title, userId }: ForkThreadOptions,
): Promise<StoredThread> {
  const sourceId = assertThreadId(threadId);
  const newId = id === undefined ? context.generateId() : assertUuid('options.id', id);
  // Checked before any SQL: under a user scope, only the scoped user (or none given: the source's, which is it).
  const chosenUserId =
    userId === undefined
      ? undefined
      : scopedUserId(context, assertOptionalUserId('options.userId', userId) ?? undefined);
  return inTenant(context, async (tx) => {
    // FOR SHARE: a redaction locks the whole fork family FOR UPDATE, so the copies are made either before it
    // starts (and it finds them) or after it commits (and they are copied redacted), never from a half-redacted source.
    const source = await requireThread(context, tx, sourceId, { lock: 'share' });
    const forkUserId = chosenUserId === undefined ? source.userId : chosenUserId;
    assertInteger('options.atSequence', atSequence, 0, source.messageCount);
    const { agentThread, agentMessage } = context.tables;
    const [lineage] = await tx
      .select({ rootThreadId: agentThread.rootThreadId })
      .from(agentThread)
      .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, sourceId)));
    const [row] = await tx
      .insert(agentThread)
      .values({
        tenantId: context.tenantId,
        id: newId,
        userId: forkUserId,
        title: title === undefined ? source.title : assertOptionalText('options.title', title, 1000),
        // A title of the fork's own is no longer the generated one: its sources are not copied.
        metadata: title === undefined ? source.metadata : withoutTitleSources(source.metadata),
        nextSequence: atSequence,
        parentThreadId: source.id,
        forkedAtSequence: atSequence,
        rootThreadId: lineage?.rootThreadId ?? source.id,
      })
      .returning(threadColumns(context.tables));
    // The copies' ids derive from the new thread's id and the source row's id (md5 is immutable), not from the
    // column's volatile gen_random_uuid() default: Citus then runs the INSERT … SELECT on the worker that holds the
    // tenant instead of pulling the rows to the coordinator (whose COPY row-level security refuses).
    await tx.execute(sql`
      insert into ${agentMessage} (id, tenant_id, thread_id, user_id, sequence, message_id, client_request_id, source_message_id, role, status, parts,
        metadata, context_state, exclusion_reason, pinned, schema_version, content_version, byte_size, token_count,
        token_counter_id, part_token_counts, created_at, completed_at, redacted_at, deleted_at)
      select md5(${newId}::text || ':' || id::text)::uuid, tenant_id, ${newId}, ${forkUserId}::text, sequence, message_id, null,
        coalesce(source_message_id, id), role,
        case when status in ('pending', 'streaming') then 'failed' else status end,
        parts, metadata, context_state, exclusion_reason, pinned, schema_version, content_version, byte_size,
        token_count, token_counter_id, part_token_counts, created_at, coalesce(completed_at, now()), redacted_at, deleted_at
      from ${agentMessage}
      where tenant_id = ${context.tenantId} and thread_id = ${sourceId} and sequence <= ${atSequence}`);
    // Copied, not shared: each thread's payloads follow its own user scope, deletion and retention.
    await copyToolPayloads(context, tx, {
      sourceThreadId: sourceId,
      newThreadId: newId,
      atSequence,
      userId: forkUserId,
    });
    return toStoredThread(row!);
  });
}
