import { afterAll, beforeAll } from 'vitest';
import type { TestDatabase } from './test-database.js';

/**
 * Opens a database in `beforeAll` and closes it in `afterAll`, and returns a handle whose fields read the open
 * database (they throw when read before `beforeAll` ran). Shared by the plain and the Citus `useTestDatabase`.
 */
export function registerTestDatabase(
  backend: TestDatabase['backend'],
  open: () => Promise<TestDatabase>,
): TestDatabase {
  let opened: TestDatabase | undefined;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(() => opened?.close());
  const current = () => {
    if (opened === undefined) throw new Error(`The ${backend} test database is read before it is open (in beforeAll).`);
    return opened;
  };
  return {
    backend,
    get db() {
      return current().db;
    },
    admin: { query: (text, params) => current().admin.query(text, params) },
    get appUrl() {
      return current().appUrl;
    },
    get adminUrl() {
      return current().adminUrl;
    },
    explainNested: (statement, settings) => current().explainNested(statement, settings),
    close: () => current().close(),
  };
}
