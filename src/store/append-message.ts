import { NotFoundError } from '../errors/not-found-error.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { AppendItem } from './append-statements.js';
import { storedTokenCount } from './stored-token-count.js';
import { postgresErrorCode, type StoreContext } from './store-context.js';
import { MESSAGE_STATUSES } from '../schema/define-agent-tables.js';
import { assertThreadId, assertUuid } from '../errors/assert-input.js';
import { validateMessage, type ValidatedMessage } from './validate-message.js';
import { runMessageCheck } from './message-check.js';
import type { AppendableMessage, StorableMessage } from '../model/stored-rows.js';
import type { MessageStatus, StoredMessage } from '../model/stored-rows.js';
import { CURRENT_MESSAGE_SCHEMA_VERSION } from '../model/message-shape-migrations.js';
import { keepCallerSettings } from '../tenant/keep-caller-settings.js';
import { executeAppend } from './execute-append.js';

/** The options of `appendMessage`. */
export interface AppendMessageOptions {
  /** An idempotency key (1 to 200 characters): a retry with the same key returns the stored row instead of appending again. @default null */
  clientRequestId?: string;
  /** The run that produced the message (must belong to the same thread). @default null */
  runId?: string;
  /** @default 'completed' */
  status?: MessageStatus;
  /** Always keep the message in the model's context. @default false */
  pinned?: boolean;
}

/** The outcome of an append: the stored message, and whether this call created it. */
export interface AppendResult<UI_MESSAGE extends AppendableMessage = StorableMessage> {
  /** True when this call inserted the row; false when a retry found it already stored. */
  created: boolean;
  /** The stored message (on a retry, the row stored first). */
  stored: StoredMessage<UI_MESSAGE>;
}

type AppendRow = {
  inserted: boolean;
  id: string;
  sequence: string | number;
  message_id: string;
  client_request_id: string | null;
  run_id: string | null;
  role: StoredMessage['message']['role'];
  status: MessageStatus;
  parts: StoredMessage['message']['parts'] | null;
  metadata: Record<string, unknown> | null;
  context_state: StoredMessage['contextState'];
  pinned: boolean;
  byte_size: number;
  token_count: number | null;
  token_counter_id: string | null;
  /** Returned by the single append; the batch function (whose result type is fixed) leaves it out. */
  part_token_counts?: number[] | null;
  content_version: number;
  lease_expires_at: string | Date | null;
  created_at: string | Date;
  updated_at: string | Date;
  completed_at: string | Date | null;
};

const date = (value: string | Date | null): Date | null => (value === null ? null : new Date(value));

/**
 * Appends one `UIMessage` to a thread in one statement: the next sequence is taken from the thread row
 * atomically with the insert, so sequences are gapless and unique under any concurrency. Idempotent by
 * message id and by `clientRequestId`: a retry, or two identical requests racing, get the stored row back.
 */
export async function appendMessage<UI_MESSAGE extends AppendableMessage>(
  context: StoreContext,
  threadId: string,
  message: UI_MESSAGE,
  options: AppendMessageOptions = {},
): Promise<AppendResult<UI_MESSAGE>> {
  const thread = assertThreadId(threadId);
  const validated = validateMessage(message, { maxBytes: context.maxMessageBytes });

  const { runId, clientRequestId, status, pinned } = appendOptions(options);
  // Checks and counting may give the event loop turns (a long message is counted in slices): the lane hands this
  // append on only after every earlier append to the thread, so concurrent appends keep their call order.
  const lane = context.appendLanes.enter(`${context.tenantId}:${thread}`);
  let item: AppendItem;
  try {
    item = await appendItem(context, message, validated, thread, { runId, clientRequestId, status, pinned });
  } catch (error) {
    lane.leave();
    throw error;
  }
  let rows: AppendRow[];
  try {
    rows = await lane.handOn(() =>
      context.appendBatcher && context.userId === null
        ? context.appendBatcher.submit<AppendRow>(context.tenantId, context.appRole, item)
        : sendAppend(context, item),
    );
  } catch (error) {
    const code = postgresErrorCode(error);
    // A racing identical request won: the whole statement rolled back (sequence bump included); read its row.
    if (code === '23505') rows = await sendAppend(context, item);
    else if (code === '23503') throw new NotFoundError({ entity: 'run', id: runId });
    else throw error;
  }
  const [row] = rows;
  if (!row) throw new NotFoundError({ entity: 'thread', id: threadId });
  return toAppendResult<UI_MESSAGE>(row, thread, validated, item);
}

/** The row to append: the message checked by the app's hook and counted (a placeholder is not counted). */
async function appendItem(
  context: StoreContext,
  message: AppendableMessage,
  validated: ReturnType<typeof validateMessage>,
  thread: string,
  { runId, clientRequestId, status, pinned }: ReturnType<typeof appendOptions>,
): Promise<AppendItem> {
  await context.checkRowLevelSecurity();
  const streaming = status === 'pending' || status === 'streaming';
  // A pending placeholder (`beginAssistantMessage`) has no content yet: its checkpoints and finalization are checked.
  if (status !== 'pending') {
    const { id, role, parts } = validated;
    const metadata = (message as { metadata?: unknown }).metadata === undefined ? undefined : validated.metadata;
    await runMessageCheck(context.checkMessage, { id, role, parts, metadata }, 'append');
  }
  const counted = streaming ? null : await storedTokenCount(context, validated);
  const leaseExpiresAt = streaming ? new Date(context.now().getTime() + context.leaseMs) : null;
  return {
    threadId: thread,
    messageId: validated.id,
    clientRequestId,
    role: validated.role,
    status,
    partsJson: validated.partsJson,
    metadataJson: validated.metadataJson,
    runId,
    byteSize: validated.byteSize,
    tokenCount: counted?.tokenCount ?? null,
    tokenCounterId: counted?.tokenCounterId ?? null,
    partTokenCounts: counted?.partTokenCounts ?? null,
    leaseExpiresAt: leaseExpiresAt?.toISOString() ?? null,
    pinned,
  };
}

/**
 * One append statement, alone: the function sets the tenant, the role and (for a user-scoped store) the user
 * itself, so that the policies hide another user's thread from its UPDATE and it inserts nothing. Not a
 * `set_config` in the statement: on Citus the function is delegated to the tenant's worker, which a coordinator's
 * `set_config` does not reach.
 */
async function sendAppend(context: StoreContext, item: AppendItem): Promise<AppendRow[]> {
  const statement = context.appendStatements.single(context.tenantId, context.appRole, item, context.userId);
  return keepCallerSettings(context.db, () =>
    executeAppend<AppendRow>(context.db, statement, { tables: context.appendStatements.tables, messages: 1 }),
  );
}

/** The options, checked, with their defaults: each bad one an {@link InvalidArgumentError} naming it and its value. */
function appendOptions(options: AppendMessageOptions) {
  const runId = options.runId === undefined ? null : assertUuid('options.runId', options.runId);
  const clientRequestId = options.clientRequestId ?? null;
  if (
    clientRequestId !== null &&
    (typeof clientRequestId !== 'string' ||
      clientRequestId.length < 1 ||
      clientRequestId.length > 200 ||
      !clientRequestId.isWellFormed() ||
      clientRequestId.includes('\u0000'))
  ) {
    throw new InvalidArgumentError({
      argument: 'options.clientRequestId',
      value: clientRequestId,
      message: 'expected a string of 1 to 200 characters.',
    });
  }
  const status = options.status ?? 'completed';
  if (!(MESSAGE_STATUSES as readonly unknown[]).includes(status)) {
    throw new InvalidArgumentError({
      argument: 'options.status',
      value: status,
      message: `expected one of ${MESSAGE_STATUSES.join(', ')}.`,
    });
  }
  const pinned = options.pinned ?? false;
  if (typeof pinned !== 'boolean')
    throw new InvalidArgumentError({ argument: 'options.pinned', value: pinned, message: 'expected a boolean.' });
  return { runId, clientRequestId, status, pinned };
}

/**
 * The row as {@link appendMessage} returns it: parts and metadata from the row, or from the request when the row
 * leaves them out. The part counts likewise: the batch function does not return them, so an inserted row has those
 * the item carried (the function stores them or, when they do not sum to the count, null: the item's never do not),
 * and a retry's row, stored by another call, null (unknown here; a read returns them).
 */
function toAppendResult<UI_MESSAGE extends AppendableMessage>(
  row: AppendRow,
  thread: string,
  validated: ValidatedMessage,
  item: AppendItem,
): AppendResult<UI_MESSAGE> {
  const partTokenCounts =
    row.part_token_counts !== undefined ? row.part_token_counts : row.inserted ? item.partTokenCounts : null;
  const storedMessage = { id: row.message_id, role: row.role, parts: row.parts ?? validated.parts } as StorableMessage;
  const metadata = row.metadata ?? validated.metadata;
  if (Object.keys(metadata).length > 0) storedMessage.metadata = metadata;
  return {
    created: row.inserted,
    stored: {
      rowId: row.id,
      threadId: thread,
      sequence: Number(row.sequence),
      message: storedMessage as unknown as UI_MESSAGE,
      status: row.status,
      contextState: row.context_state,
      exclusionReason: null,
      pinned: row.pinned,
      runId: row.run_id,
      clientRequestId: row.client_request_id,
      byteSize: row.byte_size,
      tokenCount: row.token_count,
      tokenCounterId: row.token_counter_id,
      partTokenCounts,
      contentVersion: row.content_version,
      schemaVersion: CURRENT_MESSAGE_SCHEMA_VERSION,
      storedSchemaVersion: CURRENT_MESSAGE_SCHEMA_VERSION,
      leaseExpiresAt: date(row.lease_expires_at),
      createdAt: date(row.created_at)!,
      updatedAt: date(row.updated_at)!,
      completedAt: date(row.completed_at),
      redactedAt: null,
      deletedAt: null,
    },
  };
}
