import { AgentHistoryError } from './agent-history-error.js';

/**
 * `migrate()` was run on a database whose agent-history tables were created another way (the app's own
 * drizzle-kit migrations, say), or the other way round. The two paths keep separate migrations tables, so mixing
 * them would create the same types and tables twice; nothing was changed.
 */
export class MigrationPathConflictError extends AgentHistoryError {
  /** The object that shows the other path ran: a table such as `public.agent_thread`. */
  readonly existing: string;
  /** The migrations table `migrate()` keeps, e.g. `agent_history.__agent_history_migrations`. */
  readonly migrationsTable: string;
  constructor({ existing, migrationsTable }: { existing: string; migrationsTable: string }) {
    super({
      code: 'migration-path-conflict',
      message:
        `migrate() refused: ${existing} already exists but ${migrationsTable} records none of the package's ` +
        `migrations, so the tables were created by another path (your drizzle-kit migrations, or migrate() with ` +
        `another migrationsTable). Keep one path: with drizzle-kit, add the package's new migrations to yours ` +
        `(docs/postgres.md: "Upgrading in a drizzle-kit project") and do not call migrate(). Nothing was changed.`,
    });
    this.existing = existing;
    this.migrationsTable = migrationsTable;
  }
}
