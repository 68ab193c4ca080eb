import { CliError } from './cli-error.js';

/** A command's options as given: `--name value` or `--name=value` (a string), or a flag (`true`). */
export interface ParsedOptions {
  /** The options by name, without the leading `--`. */
  values: Record<string, string | true>;
  /** Everything after a lone `--`, as it was given. */
  rest: string[];
}

/**
 * Parses a command's arguments (after the command's name). `valued` lists the options that take a value, `flags`
 * those that do not; anything else, a positional argument, or a valued option without its value is a
 * {@link CliError} with exit code 2 that names it.
 */
export function parseOptions(
  command: string,
  argv: readonly string[],
  { valued, flags = [] }: { valued: readonly string[]; flags?: readonly string[] },
): ParsedOptions {
  const values: Record<string, string | true> = {};
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument === '--') return { values, rest: argv.slice(index + 1) };
    const match = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(argument);
    if (!match) throw new CliError(`agent-history ${command}: unexpected argument ${JSON.stringify(argument)}.`, 2);
    const [, name, inline] = match as unknown as [string, string, string | undefined];
    if (flags.includes(name) && inline === undefined) {
      values[name] = true;
    } else if (valued.includes(name)) {
      const value = inline ?? argv[++index];
      if (value === undefined || (inline === undefined && value.startsWith('--')))
        throw new CliError(`agent-history ${command}: --${name} needs a value.`, 2);
      values[name] = value;
    } else {
      throw new CliError(`agent-history ${command}: unknown option --${name}.`, 2);
    }
  }
  return { values, rest: [] };
}

/** The string value of option `name`, if it was given. */
export function stringOption(options: ParsedOptions, name: string): string | undefined {
  const value = options.values[name];
  return typeof value === 'string' ? value : undefined;
}
