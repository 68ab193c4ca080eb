import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { migratorFor } from '../store/migrate.js';
import { rowsOf, type AgentHistoryDatabase } from '../tenant/database.js';
import { printReport, checkWith, validateNames } from './check.js';
import { CliError } from './cli-error.js';
import { connect } from './connect.js';
import { readJournal, shown } from './drizzle-project.js';
import { describeFailure, failedStatementOf } from './postgres-error.js';

/** The options of {@link migrate}, as `agent-history migrate` takes them. */
export interface MigrateOptions {
  cwd: string;
  url: string;
  /** The drizzle-kit migrations folder (absolute). */
  folder: string;
  migrationsTable?: string;
  migrationsSchema?: string;
  /** Run the setup check for the URL's login afterwards. */
  check?: boolean;
  schema?: string;
  appRole?: string;
  log?: (line: string) => void;
}

/**
 * Applies a drizzle-kit migrations folder with drizzle-orm's migrator for the driver, in one transaction and with
 * drizzle-kit migrate's bookkeeping (the same table, so either command can run next). On failure, throws a
 * {@link CliError} with Postgres's message, code and hint and the migration file of the failed statement.
 * Returns whether the setup check passed (true when it was not asked for).
 */
export async function migrate(options: MigrateOptions): Promise<boolean> {
  const { cwd, url, folder, log = console.log } = options;
  const { migrationsTable = '__drizzle_migrations', migrationsSchema = 'drizzle' } = options;
  if (!existsSync(join(folder, 'meta', '_journal.json')))
    throw new CliError(
      `agent-history migrate: ${shown(cwd, folder)} has no meta/_journal.json: run npx agent-history generate ` +
        'first, or pass the folder of your migrations with --folder.',
    );
  if (options.check) validateNames(options);
  const connection = await connect(url);
  try {
    const count = () => appliedCount(connection.db, migrationsSchema, migrationsTable);
    const before = await count();
    const migrator = await migratorFor(connection.db);
    try {
      await migrator.migrate(connection.db as never, { migrationsFolder: folder, migrationsTable, migrationsSchema });
    } catch (error) {
      const file = fileOfStatement(folder, failedStatementOf(error));
      throw new CliError(
        [
          `agent-history migrate: the migrations of ${shown(cwd, folder)} failed and were rolled back.`,
          ...(file ? [`in: ${shown(cwd, file)}`] : []),
          ...describeFailure(error),
        ].join('\n'),
      );
    }
    const applied = (await count()) - before;
    log(
      applied > 0
        ? `agent-history migrate: applied ${applied} migration${applied === 1 ? '' : 's'} of ${shown(cwd, folder)}.`
        : `agent-history migrate: ${shown(cwd, folder)} has nothing new to apply.`,
    );
    return options.check ? printReport(await checkWith(connection.db, options), log) : true;
  } finally {
    await connection.close();
  }
}

/** How many migrations the migrations table records (0 before it exists). */
async function appliedCount(db: AgentHistoryDatabase, schema: string, table: string): Promise<number> {
  const name = `"${schema.replaceAll('"', '""')}"."${table.replaceAll('"', '""')}"`;
  const [found] = rowsOf<{ exists: boolean }>(
    await db.execute(sql`select to_regclass(${name}) is not null as "exists"`),
  );
  if (!found?.exists) return 0;
  const [row] = rowsOf<{ count: number }>(await db.execute(sql`select count(*)::int as "count" from ${sql.raw(name)}`));
  return row?.count ?? 0;
}

/** The migration file of the folder that holds `statement` (as Drizzle ran it: one breakpoint-separated part). */
function fileOfStatement(folder: string, statement: string | undefined): string | undefined {
  if (statement === undefined) return undefined;
  for (const entry of readJournal(folder)) {
    const path = join(folder, `${entry.tag}.sql`);
    if (existsSync(path) && readFileSync(path, 'utf8').split('--> statement-breakpoint').includes(statement))
      return path;
  }
  return undefined;
}
