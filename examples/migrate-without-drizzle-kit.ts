// Applies agent-history's shipped migrations from code, without drizzle-kit: the tables, enums, the application
// role, FORCE row-level security, grants and the append function, tracked in the package's own migrations table.
// A second run does nothing.
//
//   npx tsx examples/migrate-without-drizzle-kit.ts                  # PGlite in memory
//   PGLITE_DIR=.pglite/demo npx tsx examples/migrate-without-drizzle-kit.ts
//   DATABASE_URL=postgres://owner@localhost/app npx tsx examples/migrate-without-drizzle-kit.ts
//
// Run it as the role that owns the tables (not as the application role the store switches to).
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { MIGRATIONS_FOLDER, migrate, type AgentHistoryDatabase } from 'agent-history';

async function open(): Promise<{ db: AgentHistoryDatabase; label: string; close: () => Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const client = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    return {
      db: drizzlePostgres({ client }) as unknown as AgentHistoryDatabase,
      label: 'DATABASE_URL',
      close: () => client.end(),
    };
  }
  const client = await PGlite.create(process.env.PGLITE_DIR ? { dataDir: process.env.PGLITE_DIR } : {});
  return {
    db: drizzlePglite({ client }) as unknown as AgentHistoryDatabase,
    label: process.env.PGLITE_DIR ?? 'PGlite (in memory)',
    close: () => client.close(),
  };
}

const { db, label, close } = await open();
try {
  console.log(`Migrating ${label} from ${MIGRATIONS_FOLDER}`);
  for (const attempt of ['first run', 'second run (nothing to do)']) {
    const started = performance.now();
    await migrate(db);
    console.log(`  ${attempt}: ${Math.round(performance.now() - started)} ms`);
  }
  const rows = (result: unknown) =>
    (Array.isArray(result) ? result : ((result as { rows: unknown[] }).rows ?? [])) as Array<Record<string, unknown>>;
  const tables = rows(
    await db.execute(sql`select c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as forced
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'r' and c.relname like 'agent\\_%' order by 1`),
  );
  for (const table of tables)
    console.log(
      `  table ${String(table.name).padEnd(24)} row-level security: ${table.rls ? 'on' : 'off'}${table.forced ? ', forced' : ''}`,
    );
  const [applied] = rows(
    await db.execute(sql`select count(*)::int as count from agent_history.__agent_history_migrations`),
  );
  console.log(`  ${applied?.count} migrations recorded in agent_history.__agent_history_migrations`);
} finally {
  await close();
}
