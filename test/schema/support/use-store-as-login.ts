import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { expect } from 'vitest';
import { createAgentHistory } from '../../../src/index.js';
import { psql } from '../../support/postgres-cluster.js';

/**
 * Uses the store on `databaseUrl` as a fresh NOINHERIT login that is a member of `agent_history_app`, as the README
 * says to set it up: concurrent appends (batched), reads, search, and another tenant that sees nothing. Drops it after.
 */
export async function expectStoreWorksAsLogin(databaseUrl: string): Promise<void> {
  const login = `login_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  psql(
    databaseUrl,
    `create role ${login} login noinherit; grant agent_history_app to ${login};
     grant execute on function agent_history_append_message(uuid, text, uuid, text, text, agent_message_role, agent_message_status, json, jsonb, uuid, integer, integer, text, integer[], timestamptz, boolean), agent_history_append_messages to ${login};`,
  );
  const client = postgres(databaseUrl.replace('postgres://postgres@', `postgres://${login}@`), {
    max: 4,
    onnotice: () => {},
  });
  try {
    const history = createAgentHistory({ db: drizzle({ client }) });
    const store = history.forTenant(randomUUID());
    const thread = await store.createThread({ userId: 'u1', title: 'Paris' });
    await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        store.appendMessage(thread.id, {
          id: `m${index}`,
          role: 'user',
          parts: [{ type: 'text', text: `weather in paris ${index}` }],
        }),
      ),
    );
    const { messages } = await store.listMessages(thread.id, { limit: 50 });
    expect(messages.map((stored) => stored.message.id).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `m${i}`).sort(),
    );
    expect((await store.searchMessages('paris')).length).toBeGreaterThan(0);
    const other = history.forTenant(randomUUID());
    expect(await other.listThreads({ userId: 'u1' })).toMatchObject({ threads: [] });
  } finally {
    await client.end();
    // Roles are cluster-wide: a later 0009 elsewhere would grant this member of agent_history_app EXECUTE.
    psql(databaseUrl, `drop owned by ${login}; drop role ${login};`);
  }
}
