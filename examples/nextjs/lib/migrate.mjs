// `npm run db:migrate` (and the first step of `npm run build`): applies agent-history's migrations to the PostgreSQL
// database of MIGRATION_DATABASE_URL, as the tables' owner. The app itself connects with DATABASE_URL as a login
// that can neither migrate nor bypass row-level security (README.md, "Run it"). Without MIGRATION_DATABASE_URL
// there is nothing to do: the app migrates its embedded PGlite itself, and a server is migrated by its owner.
// Plain JavaScript, so that `npm run build` runs it on any Node that runs Next.js, without a TypeScript loader.
import { migrate } from 'agent-history';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';

const url = process.env.MIGRATION_DATABASE_URL;
if (!url) {
  console.log(
    process.env.DATABASE_URL
      ? 'db:migrate: MIGRATION_DATABASE_URL is not set, skipped; the app answers 503 until the database of ' +
          'DATABASE_URL is migrated by its owner.'
      : 'db:migrate: MIGRATION_DATABASE_URL is not set, skipped (without DATABASE_URL the app uses PGlite and migrates it).',
  );
  process.exit(0);
}

const { username, hostname, port, pathname } = new URL(url);
const target = `${decodeURIComponent(username) || 'the default user'} on ${hostname}:${port || 5432}${pathname}`;
const client = postgres(url, { max: 1, onnotice: () => {} });
try {
  const started = Date.now();
  await migrate(drizzle({ client }));
  console.log(`db:migrate: agent-history's migrations are applied, as ${target} (${Date.now() - started} ms).`);
} catch (error) {
  console.error(`db:migrate: migrate() failed, as ${target}:\n${describe(error)}`);
  process.exitCode = 1;
} finally {
  await client.end({ timeout: 5 });
}

/**
 * The server's error first (its SQLSTATE, message, detail and hint), then the statement that failed, shortened: a
 * DrizzleQueryError's own message is the whole statement, and its cause is what went wrong.
 * @param {unknown} error
 */
function describe(error) {
  const lines = [];
  const query = error?.query;
  let cause = error;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const server = cause instanceof Error ? cause : { message: String(cause) };
  lines.push(`  ${server.code ? `${server.code} ` : ''}${server.message}`);
  if (server.detail) lines.push(`  detail: ${server.detail}`);
  if (server.hint) lines.push(`  hint: ${server.hint}`);
  if (typeof query === 'string') {
    const statement = query.trim().replace(/\s+/g, ' ');
    lines.push(`  statement: ${statement.length > 300 ? `${statement.slice(0, 300)}…` : statement}`);
  }
  return lines.join('\n');
}
