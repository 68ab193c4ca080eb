import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { PgDialect, PgSession } from 'drizzle-orm/pg-core';
import type { AgentHistoryDatabase } from '../tenant/database.js';

/** The folder of the package's generated migrations. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** The options of {@link migrate}. */
export interface MigrateOptions {
  /** The table that records which of the package's migrations ran. @default '__agent_history_migrations' */
  migrationsTable?: string;
  /** The schema of that table. @default 'agent_history' */
  migrationsSchema?: string;
}

/**
 * Applies the package's shipped migrations (tables, enums, the application role, FORCE row-level security,
 * grants and the append function), keeping its own migrations table. A second run does nothing. Works with
 * every Drizzle Postgres driver; run it as the tables' owner, not as the application role.
 *
 * @example await migrate(drizzle(postgres(process.env.DATABASE_URL)))
 */
export async function migrate(
  db: AgentHistoryDatabase,
  { migrationsTable = '__agent_history_migrations', migrationsSchema = 'agent_history' }: MigrateOptions = {},
): Promise<void> {
  const config = { migrationsFolder: MIGRATIONS_FOLDER, migrationsTable, migrationsSchema };
  const internals = db as unknown as { dialect: PgDialect; session: PgSession };
  await internals.dialect.migrate(readMigrationFiles(config), internals.session, config);
}
