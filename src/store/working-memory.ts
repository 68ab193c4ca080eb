import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { AgentTables } from '../schema/define-agent-tables.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import { assertInteger, assertThreadId } from '../errors/assert-input.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { requireThread } from './require-thread.js';
import { inTenant, type StoreContext } from './store-context.js';

/** A working-memory document: one per user (shared by their threads) or one per thread. */
export interface WorkingMemory {
  /** The document's row id. */
  id: string;
  /** Whose it is: the user's or the thread's. */
  scope: 'user' | 'thread';
  /** The thread of a thread-scoped document, or null. */
  threadId: string | null;
  /** The user it belongs to (a thread's document: the thread's user, or null). */
  userId: string | null;
  /** The document, free text (Markdown, JSON: the application's choice). */
  content: string;
  /** Raised by one on every update; pass it back as `expectedVersion`. */
  version: number;
  /** When it was first written. */
  createdAt: Date;
  /** When it was last written. */
  updatedAt: Date;
}

/** Which working-memory document: the options of `getWorkingMemory`. */
export interface WorkingMemoryOptions {
  /** The thread whose document to use (required for the `thread` scope). */
  threadId?: string;
  /**
   * `user`: the document of the store's user, shared by all their threads; `thread`: the thread's own.
   * @default 'user' on a store scoped to a user (`forTenant(tenantId, { userId })`), 'thread' otherwise
   */
  scope?: 'user' | 'thread';
}

/** The options of `updateWorkingMemory`. */
export interface UpdateWorkingMemoryOptions extends WorkingMemoryOptions {
  /** The new document: a string of at most 100,000 characters, without NUL or lone surrogates. */
  content: string;
  /** The version the writer read: 0 when there was no document yet. */
  expectedVersion: number;
}

const MAX_CONTENT = 100_000;

/** The store's user's document (`scope: 'user'`), or the thread's; null when none was written yet. */
export function getWorkingMemory(
  context: StoreContext,
  options: WorkingMemoryOptions = {},
): Promise<WorkingMemory | null> {
  const target = workingMemoryTarget(context, options);
  return inTenant(context, async (tx) => {
    const owner = await ownerOf(context, tx, target);
    const [row] = await tx
      .select()
      .from(context.tables.agentMemory)
      .where(documentOf(context, target, owner));
    return row ? toWorkingMemory(row) : null;
  });
}

/**
 * Replaces the document when its version is still `expectedVersion` (0: creates it), raising the version by one.
 * A stale version writes nothing and throws {@link VersionConflictError}.
 */
export function updateWorkingMemory(
  context: StoreContext,
  options: UpdateWorkingMemoryOptions,
): Promise<WorkingMemory> {
  const target = workingMemoryTarget(context, options);
  const content = options?.content;
  if (
    typeof content !== 'string' ||
    content.length > MAX_CONTENT ||
    content.includes('\u0000') ||
    !content.isWellFormed()
  )
    throw new InvalidArgumentError({
      argument: 'options.content',
      value: content,
      message: `expected a string of at most ${MAX_CONTENT} characters, without NUL or lone surrogates.`,
    });
  const expectedVersion = assertInteger('options.expectedVersion', options.expectedVersion, 0, 2_147_483_646);
  const { agentMemory } = context.tables;
  return inTenant(context, async (tx) => {
    const owner = await ownerOf(context, tx, target);
    const [row] =
      expectedVersion === 0
        ? await tx
            .insert(agentMemory)
            .values({
              tenantId: context.tenantId,
              userId: owner,
              scope: target.scope,
              kind: 'working',
              threadId: target.threadId,
              content,
            })
            .onConflictDoNothing()
            .returning()
        : await tx
            .update(agentMemory)
            .set({ content, version: sql`${agentMemory.version} + 1`, updatedAt: sql`now()` })
            .where(and(documentOf(context, target, owner), eq(agentMemory.version, expectedVersion)))
            .returning();
    if (row) return toWorkingMemory(row);
    const [current] = await tx
      .select({ version: agentMemory.version })
      .from(agentMemory)
      .where(documentOf(context, target, owner));
    throw new VersionConflictError({ entity: 'working memory', expectedVersion, actualVersion: current?.version ?? 0 });
  });
}

interface Target {
  scope: 'user' | 'thread';
  threadId: string | null;
}

/** The scope and thread asked for, checked before any SQL. */
export function workingMemoryTarget(context: StoreContext, options: WorkingMemoryOptions | undefined): Target {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new InvalidArgumentError({ argument: 'options', value: options, message: 'expected an object.' });
  const scope = options?.scope ?? (context.userId === null ? 'thread' : 'user');
  if (scope !== 'user' && scope !== 'thread')
    throw new InvalidArgumentError({
      argument: 'options.scope',
      value: scope,
      message: "expected 'user' or 'thread'.",
    });
  if (scope === 'user' && context.userId === null)
    throw new InvalidArgumentError({
      argument: 'options.scope',
      value: scope,
      message: "the user scope needs a store scoped to a user: forTenant(tenantId, { userId }), or scope: 'thread'.",
    });
  if (scope === 'user') return { scope, threadId: null };
  if (options?.threadId === undefined)
    throw new InvalidArgumentError({
      argument: 'options.threadId',
      value: undefined,
      message: "expected the thread's id: the thread scope needs it.",
    });
  return { scope, threadId: assertThreadId(options.threadId) };
}

/** The user the document belongs to: the store's user, or the thread's (which must be live and visible). */
async function ownerOf(context: StoreContext, tx: TenantTransaction, target: Target): Promise<string | null> {
  if (target.threadId === null) return context.userId;
  const thread = await requireThread(context, tx, target.threadId, { lock: 'key share' });
  return thread.userId;
}

function documentOf(context: StoreContext, target: Target, owner: string | null): SQL {
  const { agentMemory } = context.tables;
  return and(
    eq(agentMemory.tenantId, context.tenantId),
    eq(agentMemory.kind, 'working'),
    eq(agentMemory.scope, target.scope),
    target.threadId === null ? eq(agentMemory.userId, owner!) : eq(agentMemory.threadId, target.threadId),
    target.threadId === null ? isNull(agentMemory.threadId) : undefined,
  )!;
}

type MemoryRow = AgentTables['agentMemory']['$inferSelect'];

function toWorkingMemory(row: MemoryRow): WorkingMemory {
  return {
    id: row.id,
    scope: row.scope,
    threadId: row.threadId,
    userId: row.userId,
    content: row.content,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
