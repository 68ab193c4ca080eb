import { getTableColumns } from 'drizzle-orm';
import type { AgentTables } from '../schema/define-agent-tables.js';
import type { StoredMessage, StoredThread } from '../model/stored-rows.js';
import type { StorableMessage } from '../model/stored-rows.js';
import { CURRENT_MESSAGE_SCHEMA_VERSION, migrateMessageParts } from '../model/message-shape-migrations.js';

/** The message columns a read needs: everything but the search vector and its version. One object per tables (do not change it). */
export function messageColumns(tables: AgentTables) {
  let columns = messageColumnsOf.get(tables);
  if (columns === undefined) {
    const {
      searchVector: _searchVector,
      searchVersion: _searchVersion,
      tenantId: _tenantId,
      ...rest
    } = getTableColumns(tables.agentMessage);
    columns = rest;
    messageColumnsOf.set(tables, columns);
  }
  return columns;
}

type MessageColumns = Omit<
  ReturnType<typeof getTableColumns<AgentTables['agentMessage']>>,
  'searchVector' | 'searchVersion' | 'tenantId'
>;
const messageColumnsOf = new WeakMap<AgentTables, MessageColumns>();

/** A message row as the store's selects return it. */
export type MessageRow = Omit<
  AgentTables['agentMessage']['$inferSelect'],
  'searchVector' | 'searchVersion' | 'tenantId'
>;

/**
 * Maps a message row to a {@link StoredMessage}. A row written with an older message-shape version is migrated
 * on read (`MESSAGE_SHAPE_MIGRATIONS`); its stored token counts, counted on the old shape, are dropped so it is
 * counted again. Otherwise the `UIMessage` comes back exactly as it was stored.
 */
export function toStoredMessage<UI_MESSAGE extends StorableMessage = StorableMessage>(
  row: MessageRow,
): StoredMessage<UI_MESSAGE> {
  const { message, migrated } = messageOfRow<UI_MESSAGE>(row);
  return {
    rowId: row.id,
    threadId: row.threadId,
    sequence: Number(row.sequence),
    message,
    status: row.status,
    contextState: row.contextState,
    exclusionReason: row.exclusionReason,
    pinned: row.pinned,
    runId: row.runId,
    clientRequestId: row.clientRequestId,
    byteSize: row.byteSize,
    tokenCount: migrated ? null : row.tokenCount,
    tokenCounterId: migrated ? null : row.tokenCounterId,
    partTokenCounts: migrated ? null : row.partTokenCounts,
    contentVersion: row.contentVersion,
    schemaVersion: Math.max(row.schemaVersion, CURRENT_MESSAGE_SCHEMA_VERSION),
    storedSchemaVersion: row.schemaVersion,
    leaseExpiresAt: row.leaseExpiresAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    completedAt: row.completedAt,
    redactedAt: row.redactedAt,
    deletedAt: row.deletedAt,
  };
}

/** The columns {@link messageOfRow} reads. */
type MessageOfRow = Pick<MessageRow, 'messageId' | 'role' | 'parts' | 'metadata' | 'schemaVersion'>;

/**
 * The `UIMessage` a row holds: its id, role, parts (migrated on read from an older message-shape version, then
 * `migrated` is true) and metadata (left out when empty).
 */
export function messageOfRow<UI_MESSAGE extends StorableMessage = StorableMessage>(
  row: MessageOfRow,
): { message: UI_MESSAGE; migrated: boolean } {
  const shaped = Array.isArray(row.parts)
    ? migrateMessageParts(row.parts, row.schemaVersion)
    : { parts: row.parts, migrations: [] };
  const parts = shaped.parts as StorableMessage['parts'];
  const message = { id: row.messageId, role: row.role, parts } as StorableMessage;
  if (row.metadata && Object.keys(row.metadata).length > 0) message.metadata = row.metadata;
  return { message: message as UI_MESSAGE, migrated: shaped.migrations.length > 0 };
}

/** The thread columns a read needs. */
export function threadColumns(tables: AgentTables) {
  const { tenantId: _tenantId, lastActivityMinute: _second, ...columns } = getTableColumns(tables.agentThread);
  return columns;
}

type ThreadRow = Omit<AgentTables['agentThread']['$inferSelect'], 'tenantId' | 'lastActivityMinute'>;

/** A thread row as the store returns it: `next_sequence` becomes `messageCount`. */
export function toStoredThread(row: ThreadRow): StoredThread {
  const { nextSequence, ...rest } = row;
  return { ...rest, messageCount: Number(nextSequence) };
}
