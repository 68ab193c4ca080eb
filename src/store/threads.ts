import { and, desc, eq, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { assertDerivedFrom, refuseRedactedSources, renamedMetadata, replacedMetadata } from './generated-title.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import type { StoredMetadata } from '../schema/define-agent-tables.js';
import { validateMetadata } from './validate-message.js';
import { inTenant, type StoreContext } from './store-context.js';
import { threadColumns, toStoredThread } from './row-mapping.js';
import { recordAudit } from './audit.js';
import {
  assertInteger,
  assertOptionalText,
  assertThreadId,
  assertUuid,
  isUuid,
  assertOptionalUserId,
} from '../errors/assert-input.js';
import { requireThread } from './require-thread.js';
import { callInOneStatement, fromColumnNames, IN_TRANSACTION, THREAD_MISSING } from './one-statement-call.js';
import type { StoredThread } from '../model/stored-rows.js';
import type { AuditOptions } from './audit.js';

/** The options of `createThread`. */
export interface CreateThreadOptions {
  /** The thread id: a uuid. @default a random uuid */
  id?: string;
  /** The owner or end user, in the application's own id format (at most 200 characters). @default null */
  userId?: string;
  /** The thread's title (at most 1000 characters). @default null */
  title?: string;
  /** Any JSON object the application keeps with the thread. @default {} */
  metadata?: StoredMetadata;
}

/** The options of `renameThread`. */
export interface RenameThreadOptions {
  /** The new title (at most 1000 characters); `null` clears it. */
  title: string | null;
  /**
   * The ids of the messages a generated title was written from. A redaction of any of them clears the title in the
   * thread and in every fork that copied it. @default none: a title someone chose, kept by redactions
   */
  derivedFrom?: string[];
}

/** The options of `updateThreadMetadata`. */
export interface UpdateThreadMetadataOptions {
  /** The new metadata: a JSON object that replaces the old one whole (no merge), but for the store's `agentHistory` key. */
  metadata: StoredMetadata;
}

/** The options of `listThreads`. */
export interface ListThreadsOptions {
  /** Only this user's threads. @default every user's */
  userId?: string;
  /** @default 20 (1 to 200) */
  limit?: number;
  /** The `nextCursor` of the previous page. @default none (the newest page) */
  cursor?: string;
}

/** One page of `listThreads`. */
export interface ThreadPage {
  /** The threads of the page, newest activity first. */
  threads: StoredThread[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

/**
 * The user a new thread belongs to: under a user scope, the scoped user (another one is refused, as its policy
 * would refuse the row); otherwise `userId` as given.
 */
export function scopedUserId(context: StoreContext, userId: string | undefined): string | null {
  if (context.userId === null) return userId ?? null;
  if (userId !== undefined && userId !== context.userId)
    throw new InvalidArgumentError({
      argument: 'options.userId',
      value: userId,
      message: 'expected the user of the store (forTenant(tenantId, { userId })) or none.',
    });
  return context.userId;
}

/** Creates a thread of the context's tenant (under a user scope, the scoped user's). */
export function createThread(context: StoreContext, options: CreateThreadOptions = {}): Promise<StoredThread> {
  const id = options.id === undefined ? context.generateId() : assertUuid('options.id', options.id);
  const userId = scopedUserId(context, assertOptionalUserId('options.userId', options.userId) ?? undefined);
  const title = assertOptionalText('options.title', options.title, 1000);
  const metadata = validateMetadata(options.metadata);
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .insert(context.tables.agentThread)
      .values({ tenantId: context.tenantId, id, userId, title, metadata })
      .returning(threadColumns(context.tables));
    return toStoredThread(row!);
  });
}

/** A live thread of the tenant, or {@link NotFoundError}: in one statement, else in a transaction. */
export async function getThread(context: StoreContext, threadId: string): Promise<StoredThread> {
  const id = assertThreadId(threadId);
  await context.checkRowLevelSecurity();
  const rows = await callInOneStatement<Record<string, unknown>>(context, 'agent_history_get_thread', [{ uuid: id }]);
  if (rows === IN_TRANSACTION) return inTenant(context, (tx) => requireThread(context, tx, id));
  const [row] = rows === THREAD_MISSING ? [] : rows;
  if (!row) throw new NotFoundError({ entity: 'thread', id: threadId });
  return toStoredThread(fromColumnNames(threadColumns(context.tables), row));
}

// The cursor carries last_message_at as text with microseconds: a JS Date keeps milliseconds only, and a
// cursor rounded to them would skip every thread whose activity falls in the same millisecond.
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function encodeCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && CURSOR_TIME.test(at) && !Number.isNaN(new Date(at).getTime()) && isUuid(id))
      return [at, id];
  } catch {
    // fall through to the typed error
  }
  throw new InvalidArgumentError({
    argument: 'options.cursor',
    value: cursor,
    message: 'not a cursor returned by listThreads.',
  });
}

/**
 * Newest activity first, keyset-paged on (last_message_at, id). The indexes hold the activity's minute (a thread's
 * update is HOT within one): the page reads them in that order, newest minute first (`nulls last` as they are
 * built), and sorts the threads of each minute it reaches by (last_message_at, id): the same order, exactly.
 */
export function listThreads(context: StoreContext, options: ListThreadsOptions = {}): Promise<ThreadPage> {
  const limit = assertInteger('options.limit', options.limit ?? 20, 1, 200);
  const userId = assertOptionalUserId('options.userId', options.userId);
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const { agentThread } = context.tables;
  return inTenant(context, async (tx) => {
    const rows = await tx
      .select({
        ...threadColumns(context.tables),
        cursorAt: sql<string>`to_char(${agentThread.lastMessageAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
      })
      .from(agentThread)
      .where(
        and(
          eq(agentThread.tenantId, context.tenantId),
          isNull(agentThread.deletedAt),
          userId === null ? undefined : eq(agentThread.userId, userId),
          after === undefined
            ? undefined
            : and(
                // Implied by the keyset below (the minute is at most the time); it bounds the index scan.
                sql`${agentThread.lastActivityMinute} <= ${after[0]}::timestamptz`,
                or(
                  sql`${agentThread.lastMessageAt} < ${after[0]}::timestamptz`,
                  and(sql`${agentThread.lastMessageAt} = ${after[0]}::timestamptz`, lt(agentThread.id, after[1])),
                ),
              ),
        ),
      )
      .orderBy(
        sql`${agentThread.lastActivityMinute} desc nulls last`,
        desc(agentThread.lastMessageAt),
        desc(agentThread.id),
      )
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      threads: page.map(({ cursorAt: _cursorAt, ...row }) => toStoredThread(row)),
      nextCursor: rows.length > limit && last ? encodeCursor(last.cursorAt, last.id) : null,
    };
  });
}

/** Changes a live thread's title and/or metadata (what `changes` holds). */
export function updateThread(
  context: StoreContext,
  threadId: string,
  changes: { title?: string | null; derivedFrom?: string[]; metadata?: StoredMetadata },
): Promise<StoredThread> {
  const id = assertThreadId(threadId);
  const { agentThread } = context.tables;
  const derivedFrom = changes.title === undefined ? undefined : assertDerivedFrom(changes.derivedFrom);
  const set: { title?: string | null; metadata?: SQL; updatedAt: SQL } = { updatedAt: sql`now()` };
  if (changes.title !== undefined) {
    set.title = assertOptionalText('title', changes.title, 1000);
    set.metadata = renamedMetadata(agentThread.metadata, derivedFrom);
  }
  if (changes.metadata !== undefined)
    set.metadata = replacedMetadata(agentThread.metadata, validateMetadata(changes.metadata));
  return inTenant(context, async (tx) => {
    if (derivedFrom !== undefined) await refuseRedactedSources(context, tx, id, derivedFrom);
    const [row] = await tx
      .update(agentThread)
      .set(set)
      .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, id), isNull(agentThread.deletedAt)))
      .returning(threadColumns(context.tables));
    if (!row) throw new NotFoundError({ entity: 'thread', id });
    return toStoredThread(row);
  });
}

/** Hides the thread from reads and refuses appends; the rows stay until a hard delete or retention. */
export function softDeleteThread(
  context: StoreContext,
  threadId: string,
  { actor = 'system', reason }: AuditOptions = {},
) {
  const id = assertThreadId(threadId);
  const { agentThread } = context.tables;
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .update(agentThread)
      .set({ deletedAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, id), isNull(agentThread.deletedAt)))
      .returning({ id: agentThread.id, userId: agentThread.userId });
    if (!row) throw new NotFoundError({ entity: 'thread', id });
    await recordAudit(context, tx, { action: 'thread-soft-deleted', threadId: id, userId: row.userId, actor, reason });
  });
}

/** Deletes the thread with its runs, messages, summaries and snapshots (cascade). Soft-deleted threads too. */
export function deleteThread(context: StoreContext, threadId: string, { actor = 'system', reason }: AuditOptions = {}) {
  const id = assertThreadId(threadId);
  const { agentThread } = context.tables;
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .delete(agentThread)
      .where(and(eq(agentThread.tenantId, context.tenantId), eq(agentThread.id, id)))
      .returning({ id: agentThread.id, userId: agentThread.userId });
    if (!row) throw new NotFoundError({ entity: 'thread', id });
    await recordAudit(context, tx, { action: 'thread-deleted', threadId: id, userId: row.userId, actor, reason });
  });
}
