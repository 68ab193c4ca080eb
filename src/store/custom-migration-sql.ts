import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_APP_ROLE } from '../schema/define-agent-tables.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { MIGRATIONS_FOLDER } from './migrate.js';

/** The shipped custom migrations that run before the migration that creates the tables: the application role (their policies name it). */
export const BEFORE_TABLES = ['0000_roles.sql'];
/** The shipped custom migrations that run after the migration that creates the tables, in order: FORCE row-level security, the grants, the functions and triggers. */
export const AFTER_TABLES = [
  '0002_rls_grants_functions.sql',
  '0004_memory_rls_functions.sql',
  '0005_one_statement_writes.sql',
  '0006_page_reads.sql',
  '0007_content_compression.sql',
];
const TABLES = [
  'agent_thread',
  'agent_run',
  'agent_message',
  'agent_summary',
  'agent_context_snapshot',
  'agent_audit_event',
  'agent_stream_chunk',
  'agent_tool_payload',
  'agent_memory',
];
const TYPES = ['agent_message_role', 'agent_message_status', 'agent_message_context_state', 'agent_run_status'];
const FUNCTIONS = [
  'agent_history_append_messages',
  'agent_history_append_message',
  'agent_history_list_messages',
  'agent_history_list_messages_json',
  'agent_history_load_context_json',
  'agent_history_search_version',
  'agent_history_message_search_vector',
  'agent_history_message_content_version',
  'agent_history_get_thread',
  'agent_history_start_run',
  'agent_history_finish_run',
  'agent_history_write_answer',
  'agent_history_write_snapshot',
  'agent_history_list_chat_messages',
];
/**
 * A name that needs no care when double-quoted (no quote, no NUL), within Postgres's 63 bytes. No `$`: Postgres
 * allows it, but in the rewrite's replacement strings `$$` and `$1` are patterns, so the SQL would name another object.
 */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The options of {@link customMigrationSql}. */
export interface CustomMigrationSqlOptions {
  /** The Postgres schema of `defineAgentTables({ schema })`. @default 'public' */
  schema?: string;
  /** The application role of `defineAgentTables({ appRole })` and `createAgentHistory({ appRole })`. @default 'agent_history_app' */
  appRole?: string;
}

/** The custom SQL of {@link customMigrationSql}, in two parts around the migration that creates the tables. */
export interface CustomMigrationSql {
  /** Creates the application role when it does not exist (roles are cluster-wide). Runs before the tables: their policies name it. */
  beforeTables: string;
  /** FORCE row-level security, the grants, and the append functions in the tables' schema. */
  afterTables: string;
}

/**
 * The SQL of the package's custom migrations (the application role; FORCE row-level security, the grants, the
 * functions and the triggers) for tables in another schema or with another application role.
 * The shipped files name the `public` schema and `agent_history_app`; this returns them with every table, type and
 * function qualified by `schema` (the functions are created in it too) and the role renamed, statements separated
 * by drizzle-kit's `--> statement-breakpoint`. Put each part in a `drizzle-kit generate --custom` migration, before
 * and after the one that creates the tables. The store calls the functions in the schema of the tables it is given.
 *
 * @example
 * const { beforeTables, afterTables } = customMigrationSql({ schema: 'agent' });
 */
export function customMigrationSql(options: CustomMigrationSqlOptions = {}): CustomMigrationSql {
  const files = customMigrationFiles(options);
  const join = (position: CustomMigrationFile['position']) =>
    files
      .filter((file) => file.position === position)
      .map((file) => file.sql)
      .join('--> statement-breakpoint\n');
  return { beforeTables: join('before-tables'), afterTables: join('after-tables') };
}

/** One of the package's custom migrations, as {@link customMigrationFiles} returns it. */
export interface CustomMigrationFile {
  /** Its stable name, from the shipped file's (`roles`, `rls_grants_functions`): the same in every release. */
  name: string;
  /** Whether it runs before the migration that creates the tables, or after every earlier one. */
  position: 'before-tables' | 'after-tables';
  /** Its SQL for the schema and role asked for, statements separated by `--> statement-breakpoint`. */
  sql: string;
}

/**
 * The package's custom migrations one by one, in order, with the schema and role of {@link customMigrationSql}: what
 * `npx agent-history generate` writes into a drizzle-kit project, one custom migration each.
 */
export function customMigrationFiles({
  schema = 'public',
  appRole = DEFAULT_APP_ROLE,
}: CustomMigrationSqlOptions = {}): CustomMigrationFile[] {
  for (const [argument, value] of [
    ['schema', schema],
    ['appRole', appRole],
  ] as const) {
    if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
      throw new InvalidArgumentError({
        argument,
        value,
        message:
          'expected a Postgres identifier: a letter or _, then letters, digits or _ (no $), at most 63 characters.',
      });
    }
  }
  const names = [...TABLES, ...TYPES, ...FUNCTIONS].join('|');
  const rewrite = (file: string) =>
    readFileSync(join(MIGRATIONS_FOLDER, file), 'utf8')
      // Qualify every table, enum type and function, quoted or not (`FROM agent_history_append_message(`), but not a column reference such as `"agent_message"."pinned"` nor a name inside a longer one.
      .replace(
        new RegExp(`(?<![\\w."'])"?(${names})"?(?![\\w"])`, 'g'),
        (_match, name: string) => `"${schema}"."${name}"`,
      )
      // Names qualified in the files already.
      .replaceAll('"public"', `"${schema}"`)
      .replaceAll(`'${DEFAULT_APP_ROLE}'`, `'${appRole}'`)
      .replaceAll(`"${DEFAULT_APP_ROLE}"`, `"${appRole}"`)
      .trimEnd();
  // `0002_rls_grants_functions.sql` → `rls_grants_functions`
  const nameOf = (file: string) => file.replace(/^\d+_/, '').replace(/\.sql$/, '');
  return [
    ...BEFORE_TABLES.map((file) => ({ name: nameOf(file), position: 'before-tables' as const, sql: rewrite(file) })),
    ...AFTER_TABLES.map((file) => ({ name: nameOf(file), position: 'after-tables' as const, sql: rewrite(file) })),
  ];
}
