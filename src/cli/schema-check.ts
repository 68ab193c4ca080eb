import { spawnSync } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { CliError } from './cli-error.js';

/**
 * Checks, before anything is written, that the project's drizzle-kit schema defines the package's tables in
 * `schema` with policies for `appRole` (the names the written SQL uses), from the SQL `drizzle-kit export` prints
 * for it. Throws a {@link CliError} that says which `--schema` or `--app-role` to pass, or to export the tables.
 * Checks nothing when `drizzle-kit export` fails (a drizzle-kit without it): the plain generate then shows why.
 */
export function checkSchemaNames(
  drizzleKit: string,
  cwd: string,
  configArgs: readonly string[],
  { schema, appRole }: { schema: string; appRole: string },
): void {
  const result = spawnSync(drizzleKit, ['export', ...configArgs], {
    cwd,
    encoding: 'utf8',
    stdio: ['inherit', 'pipe', 'pipe'],
    shell: process.platform === 'win32',
    env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` },
  });
  if (result.status !== 0 || typeof result.stdout !== 'string') return;
  const table = /CREATE TABLE (?:"(\w+)"\.)?"agent_thread"/.exec(result.stdout);
  if (!table)
    throw new CliError(
      'agent-history: your drizzle-kit schema has no agent-history tables. Export them from it ' +
        "(export * from 'agent-history/schema', or defineAgentTables), then run this again.",
    );
  const found = table[1] ?? 'public';
  if (found !== schema)
    throw new CliError(
      `agent-history: your drizzle-kit schema has the agent-history tables in the Postgres schema "${found}", ` +
        `not "${schema}": run this with --schema ${found}.`,
    );
  const role = /CREATE POLICY "agent_thread_tenant_isolation" ON [^\n]*? TO "([^"]+)"/.exec(result.stdout)?.[1];
  if (role !== undefined && role !== appRole)
    throw new CliError(
      `agent-history: your drizzle-kit schema's policies name the application role "${role}", not "${appRole}": ` +
        `run this with --app-role ${role}.`,
    );
}
