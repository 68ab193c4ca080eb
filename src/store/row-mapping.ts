import { getTableColumns } from 'drizzle-orm';
import type { AgentTables } from '../schema/define-agent-tables.js';
import type { StoredMessage, StoredThread } from '../model/stored-rows.js';
import type { StorableMessage } from '../model/stored-rows.js';
import { CURRENT_MESSAGE_SCHEMA_VERSION, migrateMessageParts } from '../model/message-shape-migrations.js';

/** The message columns a read needs: everything but the search vector. */
export function messageColumns(tables: AgentTables) {
  const { searchVector: _searchVector, tenantId: _tenantId, ...columns } = getTableColumns(tables.agentMessage);
  return columns;
}

/** A message row as the store's selects return it. */
export type MessageRow = Omit<AgentTables['agentMessage']['$inferSelect'], 'searchVector' | 'tenantId'>;

/**
 * Maps a message row to a {@link StoredMessage}. A row written with an older message-shape version is migrated
 * on read (`MESSAGE_SHAPE_MIGRATIONS`); its stored token count, counted on the old shape, is dropped so it is
 * counted again. Otherwise the `UIMessage` comes back exactly as it was stored.
 */
export function toStoredMessage<UI_MESSAGE extends StorableMessage = StorableMessage>(
  row: MessageRow,
): StoredMessage<UI_MESSAGE> {
  const shaped = Array.isArray(row.parts)
    ? migrateMessageParts(row.parts, row.schemaVersion)
    : { parts: row.parts, migrations: [] };
  const migrated = shaped.migrations.length > 0;
  const parts = shaped.parts as StorableMessage['parts'];
  const message = { id: row.messageId, role: row.role, parts } as StorableMessage;
  if (row.metadata && Object.keys(row.metadata).length > 0) message.metadata = row.metadata;
  return {
    rowId: row.id,
    threadId: row.threadId,
    sequence: Number(row.sequence),
    message: message as UI_MESSAGE,
    status: row.status,
    contextState: row.contextState,
    exclusionReason: row.exclusionReason,
    pinned: row.pinned,
    runId: row.runId,
    clientRequestId: row.clientRequestId,
    byteSize: row.byteSize,
    tokenCount: migrated ? null : row.tokenCount,
    tokenCounterId: migrated ? null : row.tokenCounterId,
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

/** The thread columns a read needs. */
export function threadColumns(tables: AgentTables) {
  const { tenantId: _tenantId, ...columns } = getTableColumns(tables.agentThread);
  return columns;
}

type ThreadRow = Omit<AgentTables['agentThread']['$inferSelect'], 'tenantId'>;

/** A thread row as the store returns it: `next_sequence` becomes `messageCount`. */
export function toStoredThread(row: ThreadRow): StoredThread {
  const { nextSequence, ...rest } = row;
  return { ...rest, messageCount: Number(nextSequence) };
}

const DATE_KEYS = ['leaseExpiresAt', 'createdAt', 'updatedAt', 'completedAt', 'redactedAt', 'deletedAt'] as const;

/**
 * A message as the read functions of migration 0018 return it, parsed: already a {@link StoredMessage} (the
 * functions build the same `UIMessage` as {@link toStoredMessage}, metadata only when not empty), with its dates as
 * ISO strings and `schemaVersion` as stored.
 */
export type JsonMessage = Omit<StoredMessage, (typeof DATE_KEYS)[number]> &
  Record<(typeof DATE_KEYS)[number], string | null>;

/**
 * Completes a {@link JsonMessage} in place into what {@link toStoredMessage} returns for the same row: the dates
 * become `Date`s, and a row written with an older message-shape version is migrated (its stored token count
 * dropped when a part changed). A row at the current version is returned as the database wrote it: the store
 * validated it when it appended it, and only a migration changes a stored shape.
 */
export function fromJsonMessage<UI_MESSAGE extends StorableMessage = StorableMessage>(
  raw: JsonMessage,
): StoredMessage<UI_MESSAGE> {
  const stored = raw as unknown as Record<string, unknown> & StoredMessage;
  for (const key of DATE_KEYS) {
    const value = raw[key];
    if (value !== null) stored[key] = new Date(value);
  }
  if (raw.storedSchemaVersion < CURRENT_MESSAGE_SCHEMA_VERSION && Array.isArray(raw.message.parts)) {
    const shaped = migrateMessageParts(raw.message.parts, raw.storedSchemaVersion);
    if (shaped.migrations.length > 0) {
      stored.message.parts = shaped.parts as StorableMessage['parts'];
      stored.tokenCount = null;
      stored.tokenCounterId = null;
    }
  }
  stored.schemaVersion = Math.max(raw.storedSchemaVersion, CURRENT_MESSAGE_SCHEMA_VERSION);
  return stored as unknown as StoredMessage<UI_MESSAGE>;
}
