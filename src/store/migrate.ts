import { fileURLToPath } from 'node:url';
import { entityKind, sql } from 'drizzle-orm';
import type { MigrationConfig } from 'drizzle-orm/migrator';
import { MigrationPathConflictError } from '../errors/migration-path-conflict-error.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { rowsOf, type AgentHistoryDatabase } from '../tenant/database.js';
import { asStoreError } from './with-store-errors.js';

/** The folder of the package's generated migrations. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** The options of {@link migrate}. */
export interface MigrateOptions {
  /** The table that records which of the package's migrations ran. @default '__agent_history_migrations' */
  migrationsTable?: string;
  /** The schema of that table. @default 'agent_history' */
  migrationsSchema?: string;
}

type Migrator = { migrate(db: never, config: MigrationConfig): Promise<unknown> };

/**
 * Drizzle's public migrator of each Postgres driver, by the `entityKind` of the database `drizzle()` returns.
 * Loaded only for the driver in use (each imports nothing from the driver's client library).
 */
export const MIGRATORS: Record<string, () => Promise<Migrator>> = {
  PostgresJsDatabase: () => import('drizzle-orm/postgres-js/migrator'),
  NodePgDatabase: () => import('drizzle-orm/node-postgres/migrator'),
  PgliteDatabase: () => import('drizzle-orm/pglite/migrator'),
  NeonServerlessDatabase: () => import('drizzle-orm/neon-serverless/migrator'),
  NeonHttpDatabase: () => import('drizzle-orm/neon-http/migrator'),
  VercelPgDatabase: () => import('drizzle-orm/vercel-postgres/migrator'),
  XataHttpDatabase: () => import('drizzle-orm/xata-http/migrator'),
  AwsDataApiPgDatabase: () => import('drizzle-orm/aws-data-api/pg/migrator'),
  BunSQLDatabase: () => import('drizzle-orm/bun-sql/migrator'),
};

/**
 * What every drizzle-orm 0.45 Postgres migrator above does (`readMigrationFiles`, then `dialect.migrate` in one
 * transaction): used for a database of another driver, when it has that shape.
 */
async function contractMigrator(): Promise<Migrator> {
  const { readMigrationFiles } = await import('drizzle-orm/migrator');
  return {
    migrate: async (db, config) => {
      const { dialect, session } = db as unknown as {
        dialect?: { migrate?: (migrations: unknown, session: unknown, config: unknown) => Promise<void> };
        session?: unknown;
      };
      if (typeof dialect?.migrate !== 'function' || session === undefined) {
        throw new InvalidArgumentError({
          argument: 'db',
          value: (db as object)?.constructor?.name,
          message: 'expected a Drizzle Postgres database, as drizzle() returns it (not a transaction).',
        });
      }
      await dialect.migrate(readMigrationFiles(config), session, config);
    },
  };
}

/** The Drizzle migrator for `db`'s driver. */
export function migratorFor(db: AgentHistoryDatabase): Promise<Migrator> {
  const kind = (db?.constructor as { [entityKind]?: string } | undefined)?.[entityKind];
  return (kind !== undefined && Object.hasOwn(MIGRATORS, kind) ? MIGRATORS[kind]! : contractMigrator)();
}

/**
 * Refuses to run when the package's tables exist but its migrations table records none of its migrations: the
 * tables came from another path (the app's drizzle-kit migrations), and running the files again would fail halfway
 * on "type already exists".
 */
async function refuseMixedPaths(db: AgentHistoryDatabase, migrationsSchema: string, migrationsTable: string) {
  const table = `${quote(migrationsSchema)}.${quote(migrationsTable)}`;
  const [found] = rowsOf<{ ours: string | null; theirs: string | null }>(
    await db.execute(
      sql`select to_regclass(${table})::text as ours, coalesce(to_regclass('agent_thread')::text, to_regtype('agent_message_role')::text) as theirs`,
    ),
  );
  if (!found?.theirs) return;
  if (found.ours) {
    const [recorded] = rowsOf<{ any: boolean }>(
      await db.execute(sql`select exists (select 1 from ${sql.raw(table)}) as "any"`),
    );
    if (recorded?.any) return;
  }
  throw new MigrationPathConflictError({
    existing: found.theirs,
    migrationsTable: `${migrationsSchema}.${migrationsTable}`,
  });
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * Applies the package's shipped migrations (the application role, tables, enums, FORCE row-level security, grants,
 * functions and triggers), keeping its own migrations table; all in one transaction. A second run does nothing.
 * Runs Drizzle's public migrator of `db`'s driver (postgres-js, node-postgres, PGlite, Neon, Vercel, Xata, AWS Data
 * API, Bun). Run it as the database's owner (no superuser, no `BYPASSRLS` needed), not as the app's login. An owner
 * without `CREATEROLE` needs the application role made beforehand (`CREATE ROLE agent_history_app NOLOGIN`, once
 * per cluster): the error says so.
 *
 * @throws {MigrationPathConflictError} The tables exist but were not created by `migrate()` (your drizzle-kit
 * migrations made them); nothing changed.
 * @throws {DatabaseError} A statement failed (the server's message and hint, never the SQL); nothing changed.
 *
 * @example await migrate(drizzle(postgres(process.env.DATABASE_URL)))
 */
export async function migrate(
  db: AgentHistoryDatabase,
  { migrationsTable = '__agent_history_migrations', migrationsSchema = 'agent_history' }: MigrateOptions = {},
): Promise<void> {
  try {
    await refuseMixedPaths(db, migrationsSchema, migrationsTable);
    const migrator = await migratorFor(db);
    await migrator.migrate(db as never, { migrationsFolder: MIGRATIONS_FOLDER, migrationsTable, migrationsSchema });
  } catch (error) {
    throw asStoreError(error);
  }
}
