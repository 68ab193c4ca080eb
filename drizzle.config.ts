import { defineConfig } from 'drizzle-kit';

/** Generates the package's own migrations (`drizzle/`) from `src/schema`. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema/index.ts',
  out: './drizzle',
  migrations: { table: '__agent_history_migrations', schema: 'agent_history' },
});
