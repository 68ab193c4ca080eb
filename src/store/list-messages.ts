import { and, desc, eq, inArray, isNull, lt } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { MESSAGE_ROLES } from '../schema/define-agent-tables.js';
import { messageColumns, toStoredMessage } from './row-mapping.js';
import { inTenant, sortOff, type StoreContext } from './store-context.js';
import { assertInteger, assertThreadId } from '../errors/assert-input.js';
import { requireThread } from './require-thread.js';
import type { MessageRole, StoredMessage } from '../model/stored-rows.js';
import { ofThread } from './of-thread.js';
import { embeddedClient } from './execute-append.js';
import { fromColumnNames, callInOneStatement, IN_TRANSACTION, THREAD_MISSING } from './one-statement-call.js';
import type { MessageRow } from './row-mapping.js';
import { assertInclude, withToolPayloads, type MessageInclude } from './read-tool-payloads.js';

/** A page's query, checked. */
interface ListPageQuery {
  before: number | null;
  limit: number;
  roles: readonly string[] | null;
  onlyEligible: boolean;
  maxBytes: number | null;
}

/** The options of `listMessages`. */
export interface ListMessagesOptions {
  /** The most messages on the page. @default 50 (1 to 500) */
  limit?: number;
  /** Only messages older than this sequence: the previous page's `nextCursor`. @default none (the newest page) */
  before?: number;
  /** Only these roles. @default every role */
  roles?: MessageRole[];
  /** Leave out messages excluded from the context (superseded answers). @default false */
  onlyEligible?: boolean;
  /**
   * The most bytes of messages on the page (their `byteSize` summed): the page ends before the message that would
   * pass it, and `nextCursor` continues from there. The newest message is always on the page. Messages past the
   * budget are not read. @default none
   */
  maxBytes?: number;
  /** `'payloads'`: tool payloads kept whole in `agent_tool_payload` replace their previews. @default previews */
  include?: MessageInclude;
}

/** The options of `getMessage`. */
export interface GetMessageOptions {
  /** `'payloads'`: tool payloads kept whole in `agent_tool_payload` replace their previews. @default previews */
  include?: MessageInclude;
}

/** One page of `listMessages`. */
export interface MessagePage {
  /** Newest first. */
  messages: StoredMessage[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextCursor: number | null;
}

/** A page of a thread's messages, newest first, keyset on the sequence (never OFFSET). */
export function listMessages(
  context: StoreContext,
  threadId: string,
  options: ListMessagesOptions = {},
): Promise<MessagePage> {
  const thread = assertThreadId(threadId);
  const limit = assertInteger('options.limit', options.limit ?? 50, 1, 500);
  const before =
    options.before === undefined
      ? undefined
      : assertInteger('options.before', options.before, 1, Number.MAX_SAFE_INTEGER);
  const roles = options.roles;
  if (
    roles !== undefined &&
    (!Array.isArray(roles) ||
      roles.length === 0 ||
      roles.some((role) => !(MESSAGE_ROLES as readonly string[]).includes(role)))
  ) {
    throw new InvalidArgumentError({
      argument: 'options.roles',
      value: roles,
      message: `expected a non-empty array of ${MESSAGE_ROLES.join(', ')}.`,
    });
  }
  const maxBytes =
    options.maxBytes === undefined
      ? null
      : assertInteger('options.maxBytes', options.maxBytes, 1, Number.MAX_SAFE_INTEGER);
  const include = assertInclude(options.include);
  const page = listPage(context, thread, {
    before: before ?? null,
    limit,
    roles: roles ?? null,
    onlyEligible: !!options.onlyEligible,
    maxBytes,
  });
  if (include === undefined) return page;
  return page.then(async ({ messages, nextCursor }) => ({
    messages: await withToolPayloads(context, messages),
    nextCursor,
  }));
}

/** The page: in one statement, else (on the caller's transaction, on Citus) in a transaction. */
async function listPage(context: StoreContext, thread: string, query: ListPageQuery): Promise<MessagePage> {
  const { limit, before, roles } = query;
  await context.checkRowLevelSecurity();
  const args = [
    { uuid: thread },
    { bigint: before },
    { integer: limit + 1 },
    { texts: roles },
    { boolean: query.onlyEligible },
    { bigint: query.maxBytes },
  ];
  // On PGlite the page comes as json arrays of rows, newest first within each, in no order between them:
  // half the CPU of typed columns there. A server prints json at more CPU than it saves the client (`npx tsx bench/read-cost.ts`).
  let fast: Array<Record<string, unknown>> | typeof IN_TRANSACTION | typeof THREAD_MISSING = IN_TRANSACTION;
  if (embeddedClient(context.db) === null) {
    fast = await callInOneStatement(context, 'agent_history_list_messages', args);
  } else {
    fast = await callInOneStatement<Record<string, unknown>>(context, 'agent_history_list_messages_json', args);
    if (fast !== IN_TRANSACTION && fast !== THREAD_MISSING) {
      fast = fast
        .flatMap((row) => row.data as Array<Record<string, unknown>>)
        .sort((a, b) => (b.sequence as number) - (a.sequence as number));
    }
  }
  if (fast === THREAD_MISSING) throw new NotFoundError({ entity: 'thread', id: thread });
  const columns = messageColumns(context.tables);
  const rows =
    fast !== IN_TRANSACTION
      ? fast.map((row) => fromColumnNames<MessageRow>(columns, row))
      : await pageInTransaction<MessageRow>(context, thread, columns, {
          before,
          roles,
          onlyEligible: query.onlyEligible,
          limit: limit + 1,
        });
  const kept = withinBytes(rows, query.maxBytes, limit);
  const messages = rows.slice(0, kept).map((row) => toStoredMessage(row));
  return { messages, nextCursor: rows.length > kept ? messages.at(-1)!.sequence : null };
}

/**
 * A page's rows read the transactional way (the caller's transaction, a Citus coordinator), newest first, of the
 * columns asked for: the thread checked, then the thread's index walked to `limit` rows older than `before`.
 */
export function pageInTransaction<ROW>(
  context: StoreContext,
  thread: string,
  columns: Record<string, PgColumn>,
  {
    before,
    roles = null,
    onlyEligible,
    limit,
  }: { before: number | null; roles?: readonly string[] | null; onlyEligible: boolean; limit: number },
) {
  const { agentMessage } = context.tables;
  return inTenant(context, async (tx): Promise<ROW[]> => {
    await requireThread(context, tx, thread);
    await tx.execute(sortOff);
    return (await tx
      .select(columns)
      .from(agentMessage)
      .where(
        and(
          ofThread(context, agentMessage, thread),
          isNull(agentMessage.deletedAt),
          before === null ? undefined : lt(agentMessage.sequence, before),
          roles === null ? undefined : inArray(agentMessage.role, roles as MessageRole[]),
          onlyEligible ? eq(agentMessage.contextState, 'eligible') : undefined,
        ),
      )
      .orderBy(desc(agentMessage.sequence))
      .limit(limit)) as ROW[];
  });
}

/**
 * How many of `rows` (newest first) the page keeps: at most `limit`, and within `maxBytes` of `byteSize` (the
 * newest always). The read functions return at most one row past the budget; a read in a transaction returns them all.
 */
function withinBytes(rows: readonly MessageRow[], maxBytes: number | null, limit: number): number {
  const most = Math.min(rows.length, limit);
  if (maxBytes === null) return most;
  let bytes = 0;
  for (let index = 0; index < most; index++) {
    bytes += rows[index]!.byteSize;
    if (index > 0 && bytes > maxBytes) return index;
  }
  return most;
}

/** One message by its `UIMessage.id`. */
export async function getMessage(
  context: StoreContext,
  threadId: string,
  messageId: string,
  options: GetMessageOptions = {},
): Promise<StoredMessage> {
  const thread = assertThreadId(threadId);
  const include = assertInclude(options.include);
  const { agentMessage } = context.tables;
  const stored = await inTenant(context, async (tx) => {
    await requireThread(context, tx, thread);
    const [row] = await tx
      .select(messageColumns(context.tables))
      .from(agentMessage)
      .where(and(ofThread(context, agentMessage, thread), eq(agentMessage.messageId, String(messageId))));
    if (!row) throw new NotFoundError({ entity: 'message', id: messageId });
    return toStoredMessage(row);
  });
  return include === undefined ? stored : (await withToolPayloads(context, [stored]))[0]!;
}
