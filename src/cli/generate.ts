import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { customMigrationFiles, type CustomMigrationFile } from '../store/custom-migration-sql.js';
import { DEFAULT_APP_ROLE } from '../schema/define-agent-tables.js';
import { CliError } from './cli-error.js';
import { checkSchemaNames } from './schema-check.js';
import {
  findDrizzleKit,
  locateProject,
  migrationSql,
  readJournal,
  runDrizzleKit,
  shown,
  type JournalEntry,
} from './drizzle-project.js';

/** The options of {@link generate}, as `agent-history generate` takes them. */
export interface GenerateOptions {
  cwd: string;
  out?: string;
  config?: string;
  schema?: string;
  appRole?: string;
  /** The application role is made by an administrator on every cluster: add no roles migration. */
  roleExists?: boolean;
  /** Passed to the plain `drizzle-kit generate` (the one that writes the schema's changes). */
  drizzleKitArgs?: readonly string[];
  log?: (line: string) => void;
}

/** The tag drizzle-kit gives `--name <name>`: `<prefix>_<name>`, whatever the project's prefix mode. */
const hasName = (entry: JournalEntry, name: string) => entry.tag.endsWith(`_${name}`);

/** What the steps of {@link generate} share. */
interface Run {
  cwd: string;
  out: string;
  drizzleKit: string;
  configArgs: string[];
  written: string[];
}

/**
 * Adds the package's custom migrations to a drizzle-kit project, each as a `drizzle-kit generate --custom` migration
 * of the project's own: the role before the migration that creates the tables, then the schema's changes
 * (`drizzle-kit generate`), then each after-tables file the folder does not have yet, after everything else. The
 * same command installs and upgrades; when nothing is missing it adds nothing. Returns the files it wrote.
 */
export async function generate(options: GenerateOptions): Promise<string[]> {
  const { cwd, schema = 'public', appRole = DEFAULT_APP_ROLE, roleExists = false, log = console.log } = options;
  const files = customMigrationFiles({ schema, appRole });
  const project = locateProject(cwd, options.config, options.out);
  const drizzleKit = findDrizzleKit(cwd);
  const configArgs = project.config === undefined ? [] : ['--config', project.config];
  const run: Run = { cwd, out: project.out, drizzleKit, configArgs, written: [] };

  const existing = readJournal(project.out);
  const tables = tablesMigration(project.out, existing, schema);
  const roles = existing.findIndex((entry) => hasName(entry, 'agent_history_roles'));
  if (!roleExists && tables && (roles < 0 || roles > tables.index))
    throw new CliError(rolesAfterTablesMessage(shown(cwd, join(project.out, `${tables.entry.tag}.sql`)), appRole));
  const missing = (file: CustomMigrationFile, journal: JournalEntry[]) =>
    !journal.some((entry) => hasName(entry, `agent_history_${file.name}`)) &&
    !(file.position === 'before-tables' && roleExists);
  // Only when something will be written: a run that adds nothing stays one drizzle-kit generate.
  if (files.some((file) => missing(file, existing))) checkSchemaNames(drizzleKit, cwd, configArgs, { schema, appRole });
  for (const file of files.filter((file) => file.position === 'before-tables' && missing(file, existing)))
    await addCustom(run, file);

  await afterLastSecond(readJournal(project.out));
  runDrizzleKit(drizzleKit, cwd, ['generate', ...configArgs, ...(options.drizzleKitArgs ?? [])]);

  const journal = readJournal(project.out);
  if (!tablesMigration(project.out, journal, schema))
    throw new CliError(
      `agent-history: no migration in ${shown(cwd, project.out)} creates the agent-history tables ` +
        `(${schema === 'public' ? '' : `"${schema}".`}"agent_thread"). Export them from your drizzle-kit schema ` +
        "(export * from 'agent-history/schema', or defineAgentTables), or pass the Postgres schema they are in " +
        'with --schema, then run this again.',
    );
  for (const file of files.filter((file) => file.position === 'after-tables' && missing(file, journal)))
    await addCustom(run, file);

  log(
    run.written.length > 0
      ? `agent-history: added ${run.written.join(', ')}. Apply them with npx agent-history migrate.`
      : `agent-history: ${shown(cwd, project.out)} has every agent-history migration; nothing added.`,
  );
  return run.written;
}

/** Adds one custom migration with drizzle-kit (`agent_history_<name>`, last in the journal) and writes its SQL. */
async function addCustom(run: Run, file: CustomMigrationFile): Promise<void> {
  const name = `agent_history_${file.name}`;
  const before = readJournal(run.out);
  await afterLastSecond(before);
  runDrizzleKit(run.drizzleKit, run.cwd, ['generate', '--custom', '--name', name, ...run.configArgs]);
  const after = readJournal(run.out);
  const entry = after.at(-1);
  if (after.length !== before.length + 1 || !entry || !hasName(entry, name))
    throw new CliError(
      `agent-history: drizzle-kit generate --custom --name ${name} added no migration to ` +
        `${shown(run.cwd, join(run.out, 'meta/_journal.json'))}. Is ${shown(run.cwd, run.out)} the \`out\` folder ` +
        'of your drizzle config? Pass it with --out.',
    );
  const path = join(run.out, `${entry.tag}.sql`);
  writeFileSync(path, `${file.sql}\n`);
  run.written.push(shown(run.cwd, path));
}

/** The first migration of the folder that creates the package's tables, and its position. */
function tablesMigration(
  out: string,
  journal: JournalEntry[],
  schema: string,
): { entry: JournalEntry; index: number } | undefined {
  const creates = [`CREATE TABLE "${schema}"."agent_thread"`, 'CREATE TABLE "agent_thread"'];
  const index = journal.findIndex((entry) => {
    const sql = migrationSql(out, entry);
    return creates.some((statement) => sql.includes(statement));
  });
  return index < 0 ? undefined : { entry: journal[index]!, index };
}

function rolesAfterTablesMessage(file: string, appRole: string): string {
  return (
    `agent-history: ${file} creates the agent-history tables, but no agent_history_roles migration comes before ` +
    `it: the tables' policies name the role "${appRole}", which must exist when that migration runs.\n` +
    '- If it has not been applied to any database yet: delete it (npx drizzle-kit drop removes the file, its ' +
    'snapshot and its journal entry), then run npx agent-history generate again.\n' +
    `- If it has: have an administrator create the role on every cluster before your migrations run ` +
    `(CREATE ROLE "${appRole}" NOLOGIN;), then run npx agent-history generate --role-exists (and keep that option).`
  );
}

/**
 * Waits, when the folder's migrations are named by the time (drizzle-kit's `timestamp`, `supabase` or `unix`
 * prefix, to the second), until the second of the last one has passed: two migrations of the same second would
 * share a snapshot file.
 */
async function afterLastSecond(journal: JournalEntry[]): Promise<void> {
  const last = journal.at(-1);
  if (!last || /^\d{4}_/.test(last.tag)) return;
  const wait = (Math.floor(last.when / 1000) + 1) * 1000 - Date.now();
  if (wait > 0) await sleep(wait);
}
