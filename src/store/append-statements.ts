import { is, sql, type SQL } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
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
  /** The count of each part, summing to `tokenCount`; null while the message streams or when not exact. */
  partTokenCounts: number[] | null;
  /** When a pending or streaming message's lease ends (ISO text), or null. */
  leaseExpiresAt: string | null;
  /** Whether the message is pinned. */
  pinned: boolean;
}

/** The statements that call the append functions (`agent_history_append_message`, `agent_history_append_messages`). */
export interface AppendStatements {
  /**
   * One append (`agent_history_append_message`): the stored row, new or (on a retry) the one already there. With a
   * `userId`, the function scopes itself to that user (a user-scoped store), still in one statement.
   */
  single(tenantId: string, appRole: string | null, item: AppendItem, userId?: string | null): SQL;
  /** Several appends of one tenant, one statement and one commit (`agent_history_append_messages`): rows tagged `item`. */
  batch(tenantId: string, appRole: string | null, items: AppendItem[]): SQL;
  /** The store's tables, as qualified and quoted names (whose planner statistics PGlite's appends keep). */
  tables: readonly string[];
}

/**
 * The append statements for `tables`: the functions and enum types are named in the tables' schema when it is not
 * the default one (`customMigrationSql` creates them there). With `deferSearch`, an argument asks them to store no
 * search vector, and a user-scoped store passes its user: the functions make both settings themselves, where they run
 * (on Citus, on the tenant's worker, which a coordinator's `set_config` would not reach).
 */
export function appendStatements(tables: AgentTables, deferSearch = false): AppendStatements {
  const schema = getTableConfig(tables.agentMessage).schema;
  const named = (name: string): SQL =>
    schema === undefined ? sql.raw(name) : sql`${sql.identifier(schema)}.${sql.raw(name)}`;
  const rawName = (name: string) => (schema === undefined ? name : `"${schema.replaceAll('"', '""')}".${name}`);
  const [appendMessageText, appendMessagesText, roleText, statusText] = [
    'agent_history_append_message',
    'agent_history_append_messages',
    'agent_message_role',
    'agent_message_status',
  ].map(rawName);
  const [appendMessage, appendMessages, messageRole, messageStatus] = [
    named('agent_history_append_message'),
    named('agent_history_append_messages'),
    named('agent_message_role'),
    named('agent_message_status'),
  ];
  /** The last argument: none when the vector is computed inline (the functions' default). */
  const defer = deferSearch ? ', true' : '';
  /** The arguments after `p_pinned`: the deferral, and the user when scoped (the functions' defaults otherwise). */
  const tail = (userId: string | null) =>
    userId === null ? defer : `, ${deferSearch ? 'true' : 'false'}, ${literal(userId)}::text`;
  return {
    tables: Object.values(tables)
      .filter((value) => is(value, PgTable))
      .map((table) => {
        const config = getTableConfig(table as PgTable);
        return `"${(config.schema ?? 'public').replaceAll('"', '""')}"."${config.name.replaceAll('"', '""')}"`;
      }),
    single: (tenantId, appRole, item, userId = null) => {
      return literalSafe(appRole, [item]) && !userId?.includes('\u0000')
        ? sql.raw(
            `select * from ${appendMessageText}(${literal(tenantId)}::uuid, ${literal(appRole)}::text, ` +
              `${literal(item.threadId)}::uuid, ${literal(item.messageId)}::text, ${literal(item.clientRequestId)}::text, ` +
              `${literal(item.role)}::${roleText}, ${literal(item.status)}::${statusText}, ${literal(item.partsJson)}::json, ` +
              `${literal(item.metadataJson)}::jsonb, ${literal(item.runId)}::uuid, ${integer(item.byteSize)}::integer, ` +
              `${integer(item.tokenCount)}::integer, ${literal(item.tokenCounterId)}::text, ` +
              `${integers(item.partTokenCounts)}::integer[], ` +
              `${literal(item.leaseExpiresAt)}::timestamptz, ${item.pinned ? 'true' : 'false'}${tail(userId)})`,
          )
        : sql`select * from ${appendMessage}(
      ${tenantId}::uuid, ${appRole}::text, ${item.threadId}::uuid, ${item.messageId}::text, ${item.clientRequestId}::text,
      ${item.role}::${messageRole}, ${item.status}::${messageStatus}, ${item.partsJson}::json,
      ${item.metadataJson}::jsonb, ${item.runId}::uuid, ${item.byteSize}::integer, ${item.tokenCount}::integer,
      ${item.tokenCounterId}::text, ${sql.raw(integers(item.partTokenCounts))}::integer[],
      ${item.leaseExpiresAt}::timestamptz, ${item.pinned}::boolean${
        userId === null ? sql.raw(defer) : sql`, ${deferSearch}::boolean, ${userId}::text`
      })`;
    },
    batch: (tenantId, appRole, items) => {
      return literalSafe(appRole, items)
        ? sql.raw(
            `select * from ${appendMessagesText}(${literal(tenantId)}::uuid, ${literal(appRole)}::text, ` +
              `${literal(itemsJson(items))}::jsonb, ${literal(partsJson(items))}::json${defer})`,
          )
        : sql`select * from ${appendMessages}(${tenantId}::uuid, ${appRole}::text, ${itemsJson(items)}::jsonb, ${partsJson(items)}::json${sql.raw(defer)})`;
    },
  };
}

/** The items as one JSON array (without their parts), splicing in the metadata already serialized by validation. */
function itemsJson(items: AppendItem[]): string {
  return `[${items
    .map(
      (item) =>
        `{"threadId":${JSON.stringify(item.threadId)},"messageId":${JSON.stringify(item.messageId)},` +
        `"clientRequestId":${JSON.stringify(item.clientRequestId)},"role":${JSON.stringify(item.role)},` +
        `"status":${JSON.stringify(item.status)},"metadata":${item.metadataJson},` +
        `"runId":${JSON.stringify(item.runId)},"byteSize":${item.byteSize},"tokenCount":${JSON.stringify(item.tokenCount)},` +
        `"tokenCounterId":${JSON.stringify(item.tokenCounterId)},"partTokenCounts":${JSON.stringify(item.partTokenCounts)},` +
        `"leaseExpiresAt":${JSON.stringify(item.leaseExpiresAt)},` +
        `"pinned":${item.pinned}}`,
    )
    .join(',')}]`;
}

/** The items' parts as one JSON array in item order, as validation serialized them: stored as this text. */
function partsJson(items: AppendItem[]): string {
  return `[${items.map((item) => item.partsJson).join(',')}]`;
}

// The statements go as text with literals, not parameters, whenever every value can be: postgres-js sends a
// parameterized statement that is not prepared in two round trips (Parse and Describe, then Bind and Execute), a
// statement without parameters in one. Text is dollar-quoted with a tag it does not contain, so nothing in it is
// interpreted (whatever `standard_conforming_strings` says); numbers are checked integers. A value holding NUL (which
// no text column accepts) falls back to parameters, so the database refuses it exactly as before.

/** Whether every text of the statement can be a literal. */
function literalSafe(appRole: string | null, items: AppendItem[]): boolean {
  if (appRole?.includes('\u0000')) return false;
  return items.every(
    (item) =>
      ![
        item.messageId,
        item.clientRequestId,
        item.partsJson,
        item.metadataJson,
        item.tokenCounterId,
        item.role,
        item.status,
        item.threadId,
        item.runId,
        item.leaseExpiresAt,
      ].some((text) => text?.includes('\u0000')),
  );
}

/** A dollar-quoted literal whose tag does not occur in `text`, or null. */
function literal(text: string | null): string {
  if (text === null) return 'null';
  // The first occurrence of the tag after the opening one must be the closing one: not inside the text, nor made
  // of the text's end and the closing tag (a text ending in `$a` would close `$a$` early).
  let tag = '$a$';
  for (let index = 0; `${text}${tag}`.indexOf(tag) !== text.length; index++) tag = `$a${index}$`;
  return `${tag}${text}${tag}`;
}

function integer(value: number | null): string {
  if (value === null) return 'null';
  if (!Number.isSafeInteger(value)) throw new TypeError(`expected a safe integer, got ${value}`);
  return String(value);
}

/** An `integer[]` literal of checked integers (`'{1,2}'`, `'{}'`), or null: SQL text in both forms of the statement. */
function integers(values: readonly number[] | null): string {
  return values === null ? 'null' : `'{${values.map(integer).join(',')}}'`;
}
