import { DrizzleQueryError, is, sql } from 'drizzle-orm';
import { getTableConfig, PgTransaction } from 'drizzle-orm/pg-core';
import { rowsOf } from '../tenant/database.js';
import { postgresErrorCode, type StoreContext } from './store-context.js';

/** The functions refuse to run on a Citus coordinator. */
const ON_CITUS = 'AH001';
/** The functions' "thread not found" (`RAISE … USING ERRCODE = 'P0002'`). */
const THREAD_NOT_FOUND = 'P0002';

/** The answer of {@link callInOneStatement} when the caller must do its work in a transaction instead. */
export const IN_TRANSACTION = Symbol('in a transaction');
/** The answer of {@link callInOneStatement} when the thread is missing, deleted or another tenant's. */
export const THREAD_MISSING = Symbol('thread missing');

/**
 * An argument of a one-statement function: a checked uuid, text (or an enum value), an integer, a boolean, a list of
 * texts or integers, JSON text (as `json` or `jsonb`), a time, or null.
 */
export type CallArgument =
  | { uuid: string | null }
  | { text: string | null }
  | { bigint: number | null }
  | { integer: number | null }
  | { boolean: boolean }
  | { texts: readonly string[] | null }
  | { integers: readonly number[] | null }
  | { json: string | null }
  | { jsonb: string | null }
  | { timestamptz: Date | null };

/**
 * Calls the one-statement function `name` (a read such as `agent_history_list_messages`, or a write such as
 * `agent_history_write_answer`) with the tenant, role and user (empty: the whole tenant) first, in a single statement
 * (its own implicit transaction, so the settings it makes end with it) and a single round trip: every argument is
 * sent as a literal, because a parameterized statement costs postgres-js two round trips (describe, then execute),
 * unless `prepared` asks for a prepared statement, which a postgres-js connection describes once and then runs in one.
 * Returns {@link IN_TRANSACTION} when `db` is the caller's transaction (its settings must be put back), or on Citus:
 * the caller then does its work in a transaction.
 */
export async function callInOneStatement<ROW>(
  context: StoreContext,
  name: string,
  args: CallArgument[],
  { prepared = false }: CallOptions = {},
): Promise<ROW[] | typeof IN_TRANSACTION | typeof THREAD_MISSING> {
  const reads = context.oneStatementReads;
  if (!reads.available || is(context.db, PgTransaction)) return IN_TRANSACTION;
  const schema = schemaOf(context.tables.agentMessage);
  const qualified = schema === undefined ? name : `"${schema}".${name}`;
  const all = [{ uuid: context.tenantId }, { text: context.appRole }, { text: context.userId }, ...args];
  const client = prepared ? postgresJsClient(context.db) : null;
  try {
    if (client !== null) {
      const values = all.map(parameter);
      const text = `select * from ${qualified}(${values.map(([type], index) => `$${index + 1}::${type}`).join(', ')})`;
      try {
        return await client.unsafe<ROW>(
          text,
          values.map(([, value]) => value),
          { prepare: true },
        );
      } catch (error) {
        // Wrapped as Drizzle wraps a failed statement, so the store reports it alike.
        throw new DrizzleQueryError(text, [], error as Error);
      }
    }
    return rowsOf<ROW>(await context.db.execute(sql.raw(`select * from ${qualified}(${all.map(literal).join(', ')})`)));
  } catch (error) {
    const code = postgresErrorCode(error) ?? '';
    if (code === THREAD_NOT_FOUND) return THREAD_MISSING;
    if (code !== ON_CITUS) throw error;
    reads.available = false;
    return IN_TRANSACTION;
  }
}

/** How {@link callInOneStatement} sends its call. */
export interface CallOptions {
  /**
   * Sent as a prepared statement when the database is a postgres-js client (one round trip once the connection has
   * it, and no parse or plan of the call again): only for calls whose arguments are uuids, texts, integers and
   * booleans. A client made with `prepare: false` (behind a pooler in transaction mode) keeps its choice.
   * @default false (literals in one statement)
   */
  prepared?: boolean;
}

/** The part of a postgres-js client a prepared call uses. */
interface PostgresJsClient {
  unsafe<ROW>(text: string, values: unknown[], options: { prepare: boolean }): Promise<ROW[]>;
}

/**
 * The postgres-js client under a Drizzle database (`drizzle({ client })`, its public `$client`), or null; null too for
 * a client made with `prepare: false`, to which a parameterized statement costs two round trips (Parse and Describe,
 * then Bind and Execute) where literals cost one.
 */
function postgresJsClient(db: StoreContext['db']): PostgresJsClient | null {
  const client = (db as { $client?: Record<string, unknown> }).$client;
  if (
    client === undefined ||
    client === null ||
    typeof client.unsafe !== 'function' ||
    typeof client.begin !== 'function' ||
    typeof client.options !== 'object' ||
    client.options === null
  )
    return null;
  return (client.options as { prepare?: unknown }).prepare === false ? null : (client as unknown as PostgresJsClient);
}

/** An argument as a parameter: its type and value, checked as {@link literal} checks it. */
function parameter(argument: CallArgument): [type: string, value: unknown] {
  if ('uuid' in argument) {
    if (argument.uuid !== null && !UUID.test(argument.uuid))
      throw new TypeError(`expected a uuid, got ${argument.uuid}`);
    return ['uuid', argument.uuid];
  }
  if ('text' in argument) {
    if (argument.text?.includes('\u0000')) throw new TypeError('a NUL character cannot be sent as text');
    return ['text', argument.text];
  }
  if ('bigint' in argument) return ['bigint', argument.bigint === null ? null : integer(argument.bigint)];
  if ('integer' in argument) return ['integer', argument.integer === null ? null : integer(argument.integer)];
  if ('boolean' in argument) return ['boolean', argument.boolean];
  throw new TypeError(`a prepared call takes no ${Object.keys(argument)[0]} argument`);
}

const schemas = new WeakMap<object, { schema: string | undefined }>();

/** The table's schema, looked up once per table: `getTableConfig` builds every column, index and check each call. */
function schemaOf(table: StoreContext['tables']['agentMessage']): string | undefined {
  let known = schemas.get(table);
  if (known === undefined) {
    known = { schema: getTableConfig(table).schema };
    schemas.set(table, known);
  }
  return known.schema;
}

/** A table's columns as the mapping below walks them, prepared once per columns object. */
type ColumnList = Array<[key: string, name: string, column: { mapFromDriverValue: (value: unknown) => unknown }]>;
const columnLists = new WeakMap<object, ColumnList>();

/**
 * Maps a row keyed by column name (a function's row, or a `row_to_json` / `to_jsonb` of one) as Drizzle's select
 * would have. Pass the same `columns` object every time (the `*Columns` helpers keep one per tables): its list is
 * prepared once.
 */
export function fromColumnNames<ROW>(
  columns: Record<string, { name: string; mapFromDriverValue: (value: unknown) => unknown }>,
  row: Record<string, unknown>,
): ROW {
  let list = columnLists.get(columns);
  if (list === undefined) {
    list = Object.entries(columns).map(([key, column]) => [key, column.name, column]);
    columnLists.set(columns, list);
  }
  const mapped: Record<string, unknown> = {};
  for (const [key, name, column] of list) {
    const value = row[name];
    mapped[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return mapped as ROW;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function literal(argument: CallArgument): string {
  if ('uuid' in argument) {
    if (argument.uuid === null) return 'null::uuid';
    if (!UUID.test(argument.uuid)) throw new TypeError(`expected a uuid, got ${argument.uuid}`);
    return `'${argument.uuid}'::uuid`;
  }
  if ('text' in argument) return typed(argument.text, textLiteral, 'text');
  if ('json' in argument) return typed(argument.json, textLiteral, 'json');
  if ('jsonb' in argument) return typed(argument.jsonb, textLiteral, 'jsonb');
  if ('bigint' in argument) return typed(argument.bigint, integer, 'bigint');
  if ('integer' in argument) return typed(argument.integer, integer, 'integer');
  if ('boolean' in argument) return argument.boolean ? 'true' : 'false';
  if ('timestamptz' in argument) return typed(argument.timestamptz, (at) => `'${at.toISOString()}'`, 'timestamptz');
  if ('integers' in argument)
    return typed(argument.integers, (values) => `array[${values.map(integer).join(',')}]`, 'integer[]');
  return typed(argument.texts, (values) => `array[${values.map(textLiteral).join(',')}]`, 'text[]');
}

function typed<VALUE>(value: VALUE | null, write: (value: VALUE) => string, type: string): string {
  return value === null ? `null::${type}` : `${write(value)}::${type}`;
}

/** A text literal that means the same whatever `standard_conforming_strings` is. Refuses NUL (no text holds it). */
function textLiteral(value: string): string {
  if (value.includes('\u0000')) throw new TypeError('a NUL character cannot be sent in a literal');
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

function integer(value: number): string {
  if (!Number.isSafeInteger(value)) throw new TypeError(`expected a safe integer, got ${value}`);
  return String(value);
}
