import { pgSchema } from 'drizzle-orm/pg-core';
import { checkSetup, type SetupReport } from '../store/check-setup.js';
import { customMigrationFiles } from '../store/custom-migration-sql.js';
import { defineAgentTables, DEFAULT_APP_ROLE } from '../schema/define-agent-tables.js';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import { connect } from './connect.js';

/** The options of {@link check}, as `agent-history check` takes them. */
export interface CheckOptions {
  url: string;
  schema?: string;
  appRole?: string;
  log?: (line: string) => void;
}

/**
 * Runs {@link checkSetup} for the login of `url` and prints its report: each problem with the SQL that fixes it, or
 * one line when there is none. Returns whether the setup is right.
 */
export async function check({ url, schema, appRole, log = console.log }: CheckOptions): Promise<boolean> {
  validateNames({ schema, appRole });
  const connection = await connect(url);
  try {
    return printReport(await checkWith(connection.db, { schema, appRole }), log);
  } finally {
    await connection.close();
  }
}

/**
 * Refuses a `--schema` or `--app-role` that generate would refuse, the same way (`InvalidArgumentError`
 * naming the value), before anything connects.
 */
export function validateNames(names: { schema?: string; appRole?: string }): void {
  customMigrationFiles(names);
}

/** {@link checkSetup} for the tables of `schema` and the role `appRole`. */
export function checkWith(
  db: AgentHistoryDatabase,
  { schema, appRole = DEFAULT_APP_ROLE }: { schema?: string; appRole?: string },
): Promise<SetupReport> {
  const tables =
    schema === undefined || schema === 'public'
      ? defineAgentTables({ appRole })
      : defineAgentTables({ schema: pgSchema(schema), appRole });
  return checkSetup(db, { tables, appRole });
}

/** Prints a setup report; returns whether it is `ok`. */
export function printReport(report: SetupReport, log: (line: string) => void): boolean {
  if (report.ok) {
    log(`agent-history check: OK (login "${report.login}", role "${report.role}")`);
    return true;
  }
  const count = report.problems.length;
  log(
    `agent-history check: ${count} problem${count === 1 ? '' : 's'} for login "${report.login}" ` +
      `(role "${report.role}"), in the order to fix them:`,
  );
  for (const problem of report.problems) {
    log(`- ${problem.code}: ${problem.message}`);
    log(`  fix: ${problem.fix}`);
  }
  return false;
}
