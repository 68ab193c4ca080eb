import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_APP_ROLE } from '../schema/define-agent-tables.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { MIGRATIONS_FOLDER } from './migrate.js';

/** The shipped migrations drizzle-kit cannot generate from the schema: the role (before the tables: their policies name it), then FORCE RLS, grants, the append functions and their hardening. */
export const BEFORE_TABLES = ['0000_roles.sql'];
/** The shipped custom migrations that run after the migration that creates the tables, in order. */
export const AFTER_TABLES = [
  '0002_force_rls_grants_append.sql',
  '0004_append_batch.sql',
  '0009_harden_append_functions_audit.sql',
  '0012_user_scope_backfill.sql',
  '0013_read_page_function.sql',
  '0015_stream_chunk_force_rls.sql',
  '0017_search_vector_trigger.sql',
  '0019_read_index_plan.sql',
  '0021_append_part_token_counts.sql',
  '0022_load_context_json.sql',
  '0023_append_batch_set_based.sql',
  '0024_message_content_version.sql',
];
const TABLES = [
  'agent_thread',
  'agent_run',
  'agent_message',
  'agent_summary',
  'agent_context_snapshot',
  'agent_audit_event',
  'agent_stream_chunk',
];
const TYPES = ['agent_message_role', 'agent_message_status', 'agent_message_context_state'];
const FUNCTIONS = [
  'agent_history_append_messages',
  'agent_history_append_message',
  'agent_history_list_messages',
  'agent_history_load_context',
  'agent_history_list_messages_json',
  'agent_history_load_context_json',
  'agent_history_message_search_vector',
  'agent_history_message_content_version',
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
 * The SQL of the package's custom migrations (`0000`; `0002`, `0004`, `0009`, `0012`, `0013`, `0015`, `0017`, `0019`, `0021`, `0022`, `0023`, `0024`: the application
 * role, FORCE row-level security, the grants, the append functions, their pinned search path, the user-scope backfill,
 * the one-statement reads, the stream chunk log, the search vector trigger, the read functions' index plan, the per-part token counts, the reads as json, the set-based batch append, the content version trigger) for tables in another schema or with another application role.
 * The shipped files name the `public` schema and `agent_history_app`; this returns them with every table, type and
 * function qualified by `schema` (the functions are created in it too) and the role renamed, statements separated
 * by drizzle-kit's `--> statement-breakpoint`. Put each part in a `drizzle-kit generate --custom` migration, before
 * and after the one that creates the tables. The store calls the functions in the schema of the tables it is given.
 *
 * @example
 * const { beforeTables, afterTables } = customMigrationSql({ schema: 'agent' });
 */
export function customMigrationSql({
  schema = 'public',
  appRole = DEFAULT_APP_ROLE,
}: CustomMigrationSqlOptions = {}): CustomMigrationSql {
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
  const rewrite = (files: string[]) =>
    files
      .map((file) =>
        readFileSync(join(MIGRATIONS_FOLDER, file), 'utf8')
          // Qualify every table, enum type and function, quoted or not (`FROM agent_history_append_message(` in
          // 0004), but not a column reference such as `"agent_message"."pinned"` nor a name inside a longer one.
          .replace(
            new RegExp(`(?<![\\w."])"?(${names})"?(?![\\w"])`, 'g'),
            (_match, name: string) => `"${schema}"."${name}"`,
          )
          // 0002's schema grant and 0009's names, qualified in the file already.
          .replaceAll('"public"', `"${schema}"`)
          .replaceAll(`'${DEFAULT_APP_ROLE}'`, `'${appRole}'`)
          .replaceAll(`"${DEFAULT_APP_ROLE}"`, `"${appRole}"`)
          .trimEnd(),
      )
      .join('--> statement-breakpoint\n');
  return { beforeTables: rewrite(BEFORE_TABLES), afterTables: rewrite(AFTER_TABLES) };
}
