// The app's schema file: its own tables plus every agent-history table, enum and role.
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';

export * from 'agent-history/schema';

export const project = pgTable('project', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
});
