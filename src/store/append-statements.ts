import { sql, type SQL } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import type { AgentTables } from '../schema/define-agent-tables.js';

/** One append, as the SQL functions take it. */
export interface AppendItem {
  /** The thread appended to (a checked uuid). */
  threadId: string;
  /** The `UIMessage.id`. */
  messageId: string;
  /** The idempotency key, or null. */
  clientRequestId: string | null;
  /** The message role. */
  role: string;
  /** The message status the row starts in. */
  status: string;
  /** The validated parts, as JSON text. */
  partsJson: string;
  /** The validated metadata, as JSON text. */
  metadataJson: string;
  /** The run that produced it, or null. */
  runId: string | null;
  /** Parts and metadata serialized, in bytes. */
  byteSize: number;
  /** The stored token count; null while the message streams. */
  tokenCount: number | null;
  /** Which counter counted it; null while the message streams. */
  tokenCounterId: string | null;
  /** When a pending or streaming message's lease ends (ISO text), or null. */
  leaseExpiresAt: string | null;
  /** Whether the message is pinned. */
  pinned: boolean;
}

/** The statements that call the append functions of `drizzle/0002` and `0004`. */
export interface AppendStatements {
  /** One append (`agent_history_append_message`): the stored row, new or (on a retry) the one already there. */
  single(tenantId: string, appRole: string | null, item: AppendItem): SQL;
  /** Several appends of one tenant, one statement and one commit (`agent_history_append_messages`): rows tagged `item`. */
  batch(tenantId: string, appRole: string | null, items: AppendItem[]): SQL;
}

/**
 * The append statements for `tables`: the functions and enum types are named in the tables' schema when it is not
 * the default one (`customMigrationSql` creates them there).
 */
export function appendStatements(tables: AgentTables): AppendStatements {
  const schema = getTableConfig(tables.agentMessage).schema;
  const named = (name: string): SQL =>
    schema === undefined ? sql.raw(name) : sql`${sql.identifier(schema)}.${sql.raw(name)}`;
  const [appendMessage, appendMessages, messageRole, messageStatus] = [
    named('agent_history_append_message'),
    named('agent_history_append_messages'),
    named('agent_message_role'),
    named('agent_message_status'),
  ];
  return {
    single: (tenantId, appRole, item) => sql`select * from ${appendMessage}(
      ${tenantId}::uuid, ${appRole}::text, ${item.threadId}::uuid, ${item.messageId}::text, ${item.clientRequestId}::text,
      ${item.role}::${messageRole}, ${item.status}::${messageStatus}, ${item.partsJson}::jsonb,
      ${item.metadataJson}::jsonb, ${item.runId}::uuid, ${item.byteSize}::integer, ${item.tokenCount}::integer,
      ${item.tokenCounterId}::text, ${item.leaseExpiresAt}::timestamptz, ${item.pinned}::boolean)`,
    batch: (tenantId, appRole, items) =>
      sql`select * from ${appendMessages}(${tenantId}::uuid, ${appRole}::text, ${itemsJson(items)}::jsonb)`,
  };
}

/** The items as one JSON array, splicing in the parts and metadata already serialized by validation. */
function itemsJson(items: AppendItem[]): string {
  return `[${items
    .map(
      (item) =>
        `{"threadId":${JSON.stringify(item.threadId)},"messageId":${JSON.stringify(item.messageId)},` +
        `"clientRequestId":${JSON.stringify(item.clientRequestId)},"role":${JSON.stringify(item.role)},` +
        `"status":${JSON.stringify(item.status)},"parts":${item.partsJson},"metadata":${item.metadataJson},` +
        `"runId":${JSON.stringify(item.runId)},"byteSize":${item.byteSize},"tokenCount":${JSON.stringify(item.tokenCount)},` +
        `"tokenCounterId":${JSON.stringify(item.tokenCounterId)},"leaseExpiresAt":${JSON.stringify(item.leaseExpiresAt)},` +
        `"pinned":${item.pinned}}`,
    )
    .join(',')}]`;
}
