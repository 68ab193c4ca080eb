// The e2e steps of the PostgreSQL mode (e2e/postgres.ts): the app started as the NOINHERIT login answers 503 with a
// clear JSON error until the database is migrated by its owner and the login granted what the README says; then it
// serves as that login; with the server stopped it answers 503 again. Used by e2e/chat.e2e.ts.
import { GRANT_ROLE, LOGIN, OWNER, type AppDatabase } from './postgres.ts';

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

interface ErrorBody {
  error?: { code?: string; message?: string };
}

/** A 503 whose JSON error has `code`, and a message that says more than "failed" (and holds no SQL). */
async function expect503(response: Response, code: string, what: string): Promise<string> {
  const text = await response.text();
  assert(response.status === 503, `${what} answered ${response.status}, not 503: ${text.slice(0, 300)}`);
  let body: ErrorBody;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    throw new Error(`${what}: the 503 is not JSON: ${text.slice(0, 300)}`);
  }
  assert(body.error?.code === code, `${what}: error ${JSON.stringify(body.error)}, expected the code ${code}`);
  const message = body.error.message ?? '';
  assert(message.length > 20 && !/\b(select|insert|update)\b/i.test(message), `${what}: unclear message ${message}`);
  return message;
}

/** The API, the chat route and the pages (through proxy.ts) all answer the same 503. */
async function expectAll503(base: string, code: string): Promise<string> {
  const message = await expect503(await fetch(`${base}/api/threads`), code, 'GET /api/threads');
  await expect503(await fetch(`${base}/api/health`), code, 'GET /api/health');
  await expect503(await fetch(`${base}/`, { redirect: 'manual' }), code, 'GET / (a page)');
  const chat = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      threadId: crypto.randomUUID(),
      message: { id: `m-${Date.now()}`, role: 'user', parts: [{ type: 'text', text: 'hello' }] },
    }),
  });
  await expect503(chat, code, 'POST /api/chat');
  return message;
}

export async function beforeMigration(base: string): Promise<void> {
  await expectAll503(base, 'database-not-migrated');
}

/** `npm run db:migrate` as the owner; then the login still lacks its grants, and the 503 names them. */
export async function migrateAsOwner(base: string, database: AppDatabase, appDir: string): Promise<void> {
  const role = database.sql(
    'owner',
    'select rolsuper::text || rolbypassrls::text from pg_roles where rolname = current_user',
  );
  assert(role.trim() === 'falsefalse', `the owner ${OWNER} is a superuser or BYPASSRLS`);
  const output = database.migrate(appDir);
  assert(output.includes(`migrations are applied, as ${OWNER}`), `db:migrate said: ${output}`);
  const owner = database.sql('superuser', "select tableowner from pg_tables where tablename = 'agent_thread'").trim();
  assert(owner === OWNER, `agent_thread is owned by ${owner}, not ${OWNER}`);
  const message = await expectAll503(base, 'database-permission-denied');
  assert(
    message.includes(`GRANT "agent_history_app" TO "${LOGIN}";`),
    `the 503 does not name the grant the login lacks: ${message}`,
  );
}

/** The README's one grant, as the 503 named it; then the app answers. */
export async function grantAppLogin(base: string, database: AppDatabase): Promise<void> {
  database.sql('owner', GRANT_ROLE);
  for (const path of ['/api/health', '/api/threads']) {
    const response = await fetch(`${base}${path}`);
    assert(response.status === 200, `${path} answered ${response.status} after the grants: ${await response.text()}`);
  }
}

/** The app's connections are the NOINHERIT login's, which is no superuser and owns nothing; its rows are stored. */
export function ranAsLogin(database: AppDatabase): void {
  const logins = database.appConnectionLogins();
  assert(logins.length > 0, 'the app has no connection to its database');
  assert(
    logins.every((login) => login === LOGIN),
    `the app's connections log in as ${[...new Set(logins)].join(', ')}, not only ${LOGIN}`,
  );
  const role = database.sql(
    'superuser',
    `select rolsuper, rolbypassrls, rolinherit from pg_roles where rolname = '${LOGIN}'`,
  );
  assert(role.trim() === 'f|f|f', `${LOGIN} is not a plain NOINHERIT login: ${role}`);
  const stored = database.sql(
    'superuser',
    "select count(*) from agent_message m join agent_thread t on t.id = m.thread_id where t.user_id = 'demo-user'",
  );
  assert(Number(stored) > 10, `the database holds ${stored.trim()} messages of demo-user's threads`);
  const owned = database.sql('superuser', `select count(*) from pg_tables where tableowner = '${LOGIN}'`);
  assert(owned.trim() === '0', `${LOGIN} owns ${owned.trim()} tables`);
}

/** The server stopped under the running app: the same routes answer 503 database-unavailable. */
export async function databaseStopped(base: string, database: AppDatabase): Promise<void> {
  database.stopServer();
  await expectAll503(base, 'database-unavailable');
}
