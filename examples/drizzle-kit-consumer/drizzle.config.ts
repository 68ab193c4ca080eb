import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './schema.ts',
  out: './drizzle',
  // Used by `drizzle-kit migrate`; run it as the tables' owner.
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://localhost/app' },
});
