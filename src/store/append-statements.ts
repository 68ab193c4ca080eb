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
 * the default one (`customMigrationSql` creates them there). With `deferSearch`, each statement first sets
 * `agent_history.search` to 'deferred' for its transaction, so the trigger of migration 0017 stores a null search
 * vector: the function's tenant argument depends on that setting (a lateral reference), so it is set before.
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
  const defer = `select a.* from (select set_config('agent_history.search', 'deferred', true) as search) s cross join lateral `;
  const callText = (call: string) => (deferSearch ? `${defer}${call} a` : `select * from ${call}`);
  const tenantText = (tenantId: string) =>
    deferSearch ? `(${literal(tenantId)} || left(s.search, 0))::uuid` : `${literal(tenantId)}::uuid`;
  const call = (body: SQL) => (deferSearch ? sql`${sql.raw(defer)}${body} a` : sql`select * from ${body}`);
  const tenant = (tenantId: string) =>
    deferSearch ? sql`(${tenantId}::text || left(s.search, 0))::uuid` : sql`${tenantId}::uuid`;
  return {
    single: (tenantId, appRole, item) =>
      literalSafe(appRole, [item])
        ? sql.raw(
            callText(
              `${appendMessageText}(${tenantText(tenantId)}, ${literal(appRole)}::text, ` +
                `${literal(item.threadId)}::uuid, ${literal(item.messageId)}::text, ${literal(item.clientRequestId)}::text, ` +
                `${literal(item.role)}::${roleText}, ${literal(item.status)}::${statusText}, ${literal(item.partsJson)}::jsonb, ` +
                `${literal(item.metadataJson)}::jsonb, ${literal(item.runId)}::uuid, ${integer(item.byteSize)}::integer, ` +
                `${integer(item.tokenCount)}::integer, ${literal(item.tokenCounterId)}::text, ` +
                `${literal(item.leaseExpiresAt)}::timestamptz, ${item.pinned ? 'true' : 'false'})`,
            ),
          )
        : call(sql`${appendMessage}(
      ${tenant(tenantId)}, ${appRole}::text, ${item.threadId}::uuid, ${item.messageId}::text, ${item.clientRequestId}::text,
      ${item.role}::${messageRole}, ${item.status}::${messageStatus}, ${item.partsJson}::jsonb,
      ${item.metadataJson}::jsonb, ${item.runId}::uuid, ${item.byteSize}::integer, ${item.tokenCount}::integer,
      ${item.tokenCounterId}::text, ${item.leaseExpiresAt}::timestamptz, ${item.pinned}::boolean)`),
    batch: (tenantId, appRole, items) =>
      literalSafe(appRole, items)
        ? sql.raw(
            callText(
              `${appendMessagesText}(${tenantText(tenantId)}, ${literal(appRole)}::text, ` +
                `${literal(itemsJson(items))}::jsonb)`,
            ),
          )
        : call(sql`${appendMessages}(${tenant(tenantId)}, ${appRole}::text, ${itemsJson(items)}::jsonb)`),
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
