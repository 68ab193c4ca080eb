import { NotFoundError } from '../errors/not-found-error.js';
import { assertInteger, assertThreadId } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { AgentTables } from '../schema/define-agent-tables.js';
import type { StorableMessage, StoredMessage } from '../model/stored-rows.js';
import { callInOneStatement, fromColumnNames, IN_TRANSACTION, THREAD_MISSING } from './one-statement-call.js';
import { messageColumns, messageOfRow, type MessageRow } from './row-mapping.js';
import type { StoreContext } from './store-context.js';
import { pageInTransaction } from './list-messages.js';

/** The options of `listChatMessages`. */
export interface ListChatMessagesOptions {
  /** The most messages on the page. @default 50 (1 to 500) */
  limit?: number;
  /** Only messages older than this sequence: the previous page's `nextCursor`. @default none (the newest page) */
  before?: number;
  /** Leave out messages excluded from the context (answers superseded by a regenerate or an edit). @default false */
  onlyEligible?: boolean;
}

/** One message of a chat window's page: the `UIMessage` and what a chat window shows of its stored state. */
export type ChatWindowMessage<UI_MESSAGE extends StorableMessage = StorableMessage> = Pick<
  StoredMessage<UI_MESSAGE>,
  'message' | 'sequence' | 'status' | 'contextState' | 'exclusionReason' | 'createdAt'
>;

/** One page of `listChatMessages`. */
export interface ChatWindowPage<UI_MESSAGE extends StorableMessage = StorableMessage> {
  /** Oldest first, as a chat window shows them. */
  messages: Array<ChatWindowMessage<UI_MESSAGE>>;
  /** Pass as `before` for the next (older) page; null on the last page. */
  nextCursor: number | null;
}

/** The row of a chat window's page, as the read function and the transactional read return it. */
type ChatRow = Pick<MessageRow, keyof ReturnType<typeof pickChatColumns>>;

/** A page of a thread's messages as a chat window shows them, newest page first, keyset on the sequence. */
export async function listChatMessages(
  context: StoreContext,
  threadId: string,
  options: ListChatMessagesOptions = {},
): Promise<ChatWindowPage> {
  const thread = assertThreadId(threadId);
  const limit = assertInteger('options.limit', options.limit ?? 50, 1, 500);
  const before =
    options.before === undefined ? null : assertInteger('options.before', options.before, 1, Number.MAX_SAFE_INTEGER);
  const onlyEligible = options.onlyEligible === undefined ? false : options.onlyEligible;
  if (typeof onlyEligible !== 'boolean') {
    throw new InvalidArgumentError({
      argument: 'options.onlyEligible',
      value: onlyEligible,
      message: 'expected a boolean.',
    });
  }
  await context.checkRowLevelSecurity();
  const rows = await readPage(context, thread, before, limit + 1, onlyEligible);
  const kept = Math.min(rows.length, limit);
  const messages: ChatWindowMessage[] = [];
  for (let index = kept - 1; index >= 0; index--) {
    const row = rows[index]!;
    messages.push({
      message: messageOfRow(row).message,
      sequence: Number(row.sequence),
      status: row.status,
      contextState: row.contextState,
      exclusionReason: row.exclusionReason,
      createdAt: row.createdAt,
    });
  }
  return { messages, nextCursor: rows.length > kept ? messages[0]!.sequence : null };
}

/**
 * The page's rows, newest first: in one statement of the read function (prepared on postgres-js), else (the caller's
 * transaction, a Citus coordinator) in a transaction. Typed columns on PGlite too: for these ten, json chunks cost
 * it more (`listMessages` reads json there, for its 27).
 */
async function readPage(
  context: StoreContext,
  thread: string,
  before: number | null,
  limit: number,
  onlyEligible: boolean,
): Promise<ChatRow[]> {
  const args = [{ uuid: thread }, { bigint: before }, { integer: limit }, { boolean: onlyEligible }];
  const columns = chatColumns(context.tables);
  const name = 'agent_history_list_chat_messages';
  const fast = await callInOneStatement<Record<string, unknown>>(context, name, args, { prepared: true });
  if (fast === THREAD_MISSING) throw new NotFoundError({ entity: 'thread', id: thread });
  if (fast !== IN_TRANSACTION) return fast.map((row) => fromColumnNames<ChatRow>(columns, row));
  return pageInTransaction<ChatRow>(context, thread, columns, { before, onlyEligible, limit });
}

const chatColumnsOf = new WeakMap<AgentTables, ReturnType<typeof pickChatColumns>>();

/** The columns of a chat window's page, one object per tables (so its mapping is prepared once). */
function chatColumns(tables: AgentTables) {
  let columns = chatColumnsOf.get(tables);
  if (columns === undefined) {
    columns = pickChatColumns(tables);
    chatColumnsOf.set(tables, columns);
  }
  return columns;
}

function pickChatColumns(tables: AgentTables) {
  const all = messageColumns(tables);
  return {
    messageId: all.messageId,
    role: all.role,
    parts: all.parts,
    metadata: all.metadata,
    schemaVersion: all.schemaVersion,
    sequence: all.sequence,
    status: all.status,
    contextState: all.contextState,
    exclusionReason: all.exclusionReason,
    createdAt: all.createdAt,
  };
}
