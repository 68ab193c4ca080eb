// Attacks on the Postgres store's context cache (`createAgentHistory({ contextCache })`): a request served with the
// cache must send the model what the same request sends without it, whatever the caller did with an earlier
// request's messages; a redacted message's old text must not stay in the process's cache.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { createContextManager } from '../../src/ai-sdk/index.js';
import { createAgentHistory, createContextMessageCache } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { tokenCounter } from '../context/fixtures.js';

type TenantStore = ReturnType<ReturnType<typeof createAgentHistory>['forTenant']>;

describe.each(BACKENDS)('attacks on the context cache on %s', (backend) => {
  const database = useTestDatabase(backend);

  function managerOf(store: TenantStore, thread: string) {
    return createContextManager({ store: store.contextStore(thread), model: 'openai:gpt-4o', tokenCounter });
  }

  async function twoStores() {
    const tenant = randomUUID();
    const cached = createAgentHistory({ db: database.db, contextCache: createContextMessageCache() }).forTenant(tenant);
    const uncached = createAgentHistory({ db: database.db, contextCache: false }).forTenant(tenant);
    const thread = await cached.createThread();
    await cached.appendMessage(thread.id, { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hello' }] });
    await cached.appendMessage(thread.id, {
      id: 'a1',
      role: 'assistant',
      parts: [{ type: 'text', text: 'Hi, how can I help?' }],
    });
    await cached.appendMessage(thread.id, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Tell me a joke' }] });
    return { cached, uncached, thread: thread.id };
  }

  it("should not send the next request what a caller set on this request's messages (top level)", async () => {
    const { cached, uncached, thread } = await twoStores();
    const first = await managerOf(cached, thread).initialMessages();
    // The usual provider cache breakpoint: the app marks the last message of the prompt it sends, in place.
    const last = first.at(-1) as ModelMessage & { providerOptions?: unknown };
    last.providerOptions = { anthropic: { cacheControl: { type: 'ephemeral' } } };

    const again = await managerOf(cached, thread).initialMessages();
    const fresh = await managerOf(uncached, thread).initialMessages();
    expect(JSON.stringify(again)).toBe(JSON.stringify(fresh));
  });
});
