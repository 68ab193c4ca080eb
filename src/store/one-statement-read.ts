import { is, sql } from 'drizzle-orm';
import { getTableConfig, PgTransaction } from 'drizzle-orm/pg-core';
import { rowsOf } from '../tenant/database.js';
import { postgresErrorCode, type StoreContext } from './store-context.js';

/** The functions refuse to run on a Citus coordinator. */
const ON_CITUS = 'AH001';
/** The functions' "thread not found" (`RAISE … USING ERRCODE = 'P0002'`). */
const THREAD_NOT_FOUND = 'P0002';

/** The answer of {@link readInOneStatement} when the caller must read in a transaction instead. */
export const READ_IN_TRANSACTION = Symbol('read in a transaction');
/** The answer of {@link readInOneStatement} when the thread is missing, deleted or another tenant's. */
export const THREAD_MISSING = Symbol('thread missing');

/** An argument of a read function: a checked uuid or enum value, an integer, a boolean, text, or null. */
export type ReadArgument =
  | { uuid: string }
  | { text: string | null }
  | { bigint: number | null }
  | { integer: number }
  | { boolean: boolean }
  | { texts: readonly string[] | null };

/**
 * Calls the read function `name` (`agent_history_list_messages`, `agent_history_list_messages_json`,
 * `agent_history_load_context_json`) with the tenant,
 * role and user (empty: the whole tenant) first, in a single statement (its own implicit transaction, so the settings it makes end with it) and a
 * single round trip: every argument is sent as a literal, because a parameterized statement costs postgres-js two
 * round trips (describe, then execute). Returns {@link READ_IN_TRANSACTION} when `db` is the caller's transaction
 * (its settings must be put back), or on Citus: the caller then reads in a transaction.
 */
export async function readInOneStatement<ROW>(
  context: StoreContext,
  name: string,
  args: ReadArgument[],
): Promise<ROW[] | typeof READ_IN_TRANSACTION | typeof THREAD_MISSING> {
  const reads = context.oneStatementReads;
  if (!reads.available || is(context.db, PgTransaction)) return READ_IN_TRANSACTION;
  const schema = schemaOf(context.tables.agentMessage);
  const qualified = schema === undefined ? name : `"${schema}".${name}`;
  const literals = [{ uuid: context.tenantId }, { text: context.appRole }, { text: context.userId }, ...args].map(
    literal,
  );
  try {
    return rowsOf<ROW>(await context.db.execute(sql.raw(`select * from ${qualified}(${literals.join(', ')})`)));
  } catch (error) {
    const code = postgresErrorCode(error) ?? '';
    if (code === THREAD_NOT_FOUND) return THREAD_MISSING;
    if (code !== ON_CITUS) throw error;
    reads.available = false;
    return READ_IN_TRANSACTION;
  }
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

function literal(argument: ReadArgument): string {
  if ('uuid' in argument) {
    if (!UUID.test(argument.uuid)) throw new TypeError(`expected a uuid, got ${argument.uuid}`);
    return `'${argument.uuid}'::uuid`;
  }
  if ('text' in argument) return argument.text === null ? 'null::text' : `${textLiteral(argument.text)}::text`;
  if ('bigint' in argument) return argument.bigint === null ? 'null::bigint' : `${integer(argument.bigint)}::bigint`;
  if ('integer' in argument) return `${integer(argument.integer)}::integer`;
  if ('boolean' in argument) return argument.boolean ? 'true' : 'false';
  return argument.texts === null ? 'null::text[]' : `array[${argument.texts.map(textLiteral).join(',')}]::text[]`;
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
