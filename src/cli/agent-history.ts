#!/usr/bin/env node
// `npx agent-history <command>`: the package's bin (see usage.ts).
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { parseOptions, stringOption } from './arguments.js';
import { check } from './check.js';
import { CliError } from './cli-error.js';
import { databaseUrl } from './connect.js';
import { locateProject } from './drizzle-project.js';
import { generate } from './generate.js';
import { migrate } from './migrate.js';
import { describeFailure, isDatabaseFailure } from './postgres-error.js';
import { USAGE } from './usage.js';

/** Runs one command line (without `node` and the script); returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const cwd = process.cwd();
  if (command === 'generate') {
    const options = parseOptions(command, rest, {
      valued: ['out', 'config', 'schema', 'app-role'],
      flags: ['role-exists'],
    });
    await generate({
      cwd,
      out: stringOption(options, 'out'),
      config: stringOption(options, 'config'),
      schema: stringOption(options, 'schema'),
      appRole: stringOption(options, 'app-role'),
      roleExists: options.values['role-exists'] === true,
      drizzleKitArgs: options.rest,
    });
    return 0;
  }
  if (command === 'check') {
    const options = parseOptions(command, rest, { valued: ['url', 'schema', 'app-role'] });
    const url = databaseUrl(command, stringOption(options, 'url'));
    const ok = await check({
      url,
      schema: stringOption(options, 'schema'),
      appRole: stringOption(options, 'app-role'),
    });
    return ok ? 0 : 1;
  }
  if (command === 'migrate') {
    const options = parseOptions(command, rest, {
      valued: ['url', 'folder', 'config', 'migrations-table', 'migrations-schema', 'schema', 'app-role'],
      flags: ['check'],
    });
    const ok = await migrate({
      cwd,
      url: databaseUrl(command, stringOption(options, 'url')),
      folder: locateProject(cwd, stringOption(options, 'config'), stringOption(options, 'folder')).out,
      migrationsTable: stringOption(options, 'migrations-table'),
      migrationsSchema: stringOption(options, 'migrations-schema'),
      check: options.values.check === true,
      schema: stringOption(options, 'schema'),
      appRole: stringOption(options, 'app-role'),
    });
    return ok ? 0 : 1;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command === undefined) console.error(`agent-history: no command.\n\n${USAGE}`);
  else console.error(`agent-history: unknown command ${JSON.stringify(command)}.\n\n${USAGE}`);
  return 2;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof CliError) {
    console.error(error.message);
    process.exitCode = error.exitCode;
  } else if (error instanceof InvalidArgumentError) {
    console.error(`agent-history: ${error.message}`);
    process.exitCode = 2;
  } else {
    // A connection that failed (ECONNREFUSED, a password refused) or a bug: what it said, and where for a bug.
    console.error([`agent-history ${process.argv[2]}: failed.`, ...describeFailure(error)].join('\n'));
    if (!isDatabaseFailure(error)) console.error(error);
    process.exitCode = 1;
  }
}
