// The Postgres store's context cache (`createAgentHistory({ contextCache })`): the context engine keeps each row's
// converted messages between requests, per tenant and thread. What must hold: a tenant never gets another tenant's
// entry, even for a row id and thread id both have; a redaction leaves no converted copy behind in this process;
// a message whose parts change through the store (approvals recorded on a finished answer) reaches the model as it
// is now, not as it was cached.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { createContextManager } from '../../src/ai-sdk/index.js';
import { createAgentHistory, createContextMessageCache, InvalidArgumentError } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { tokenCounter } from '../context/fixtures.js';

const text = (messages: readonly ModelMessage[]) => JSON.stringify(messages);

describe.each(BACKENDS)('the context cache on %s', (backend) => {
  const database = useTestDatabase(backend);

  async function contextOf(store: ReturnType<ReturnType<typeof createAgentHistory>['forTenant']>, thread: string) {
    const manager = createContextManager({ store: store.contextStore(thread), model: 'openai:gpt-4o', tokenCounter });
    return manager.initialMessages();
  }

  it("should never hand one tenant another tenant's converted message, for the same thread id and row id", async () => {
    const cache = createContextMessageCache();
    const history = createAgentHistory({ db: database.db, contextCache: cache });
    const threadId = randomUUID();
    const a = history.forTenant(randomUUID());
    const b = history.forTenant(randomUUID());
    await a.createThread({ id: threadId });
    await a.appendMessage(threadId, {
      id: 'm1',
      role: 'user',
      parts: [{ type: 'text', text: 'A: the vault code is 0451' }],
    });
    expect(text(await contextOf(a, threadId))).toContain('0451');
    expect(cache.size).toBe(1);

    // Tenant B holds a thread of the same id, and a row of the same id, message id, version and status.
    await b.createThread({ id: threadId });
    await b.appendMessage(threadId, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'B: hello there' }] });
    const [rowA] = (await a.loadContext(threadId)).tail;
    await database.admin.query('update agent_message set id = $1 where tenant_id = $2 and thread_id = $3', [
      rowA!.rowId,
      b.tenantId,
      threadId,
    ]);
    const [rowB] = (await b.loadContext(threadId)).tail;
    expect([rowB!.rowId, rowB!.contentVersion, rowB!.status]).toEqual([
      rowA!.rowId,
      rowA!.contentVersion,
      rowA!.status,
    ]);

    const seen = text(await contextOf(b, threadId));
    expect(seen).toContain('B: hello there');
    expect(seen).not.toContain('0451');
    expect(text(await contextOf(a, threadId))).toContain('0451');
  });

  it('should drop a redacted message from the cache at once, and never send its old text', async () => {
    const cache = createContextMessageCache();
    const store = createAgentHistory({ db: database.db, contextCache: cache }).forTenant(randomUUID());
    const thread = await store.createThread();
    await store.appendMessage(thread.id, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'card 4111 1111' }] });
    await store.appendMessage(thread.id, { id: 'm2', role: 'user', parts: [{ type: 'text', text: 'and hello' }] });
    expect(text(await contextOf(store, thread.id))).toContain('4111');
    expect(cache.size).toBe(2);
    await store.redactMessage(thread.id, 'm1', { actor: 'test', reason: 'PCI' });
    expect(cache.size).toBe(1);
    expect(text(await contextOf(store, thread.id))).not.toContain('4111');
  });

  it('should send a finished answer as it is after its parts change through the store', async () => {
    const cache = createContextMessageCache();
    const store = createAgentHistory({ db: database.db, contextCache: cache }).forTenant(randomUUID());
    const thread = await store.createThread();
    await store.appendMessage(thread.id, {
      id: 'u1',
      role: 'user',
      parts: [{ type: 'text', text: 'Delete the logs?' }],
    });
    const request = {
      type: 'tool-deleteLogs',
      toolCallId: 'call-1',
      input: { path: '/var/log' },
      approval: { id: 'approval-1' },
    };
    const asked = [
      { type: 'text', text: 'I need your approval.' },
      { ...request, state: 'approval-requested' },
    ];
    await store.appendMessage(thread.id, { id: 'a1', role: 'assistant', parts: asked });
    expect(text(await contextOf(store, thread.id))).toContain('tool-approval-request');
    expect(cache.size).toBe(2);

    // The approval is recorded on the same row, which stays `completed` (no run reopens it).
    const answered = [
      asked[0],
      { ...request, state: 'approval-responded', approval: { id: 'approval-1', approved: false, reason: 'keep them' } },
    ];
    const { updated } = await store.reopenAssistantMessage(thread.id, 'a1', { expectedParts: asked, parts: answered });
    expect(updated).toBe(true);
    const seen = text(await contextOf(store, thread.id));
    expect(seen).toContain('tool-approval-response');
    expect(seen).toContain('keep them');
  });

  it('should be on by default, off with false, and refuse a bad option naming it', () => {
    const thread = randomUUID();
    const on = createAgentHistory({ db: database.db }).forTenant(randomUUID()).contextStore(thread);
    const off = createAgentHistory({ db: database.db, contextCache: false })
      .forTenant(randomUUID())
      .contextStore(thread);
    expect(on.messageCache).toBeDefined();
    expect(off.messageCache).toBeUndefined();
    for (const contextCache of [null, 'yes', { maxBytes: -1 }])
      expect(() => createAgentHistory({ db: database.db, contextCache: contextCache as never })).toThrow(
        InvalidArgumentError,
      );
    expect(() => createAgentHistory({ db: database.db, contextCache: { maxBytes: 1.5 } })).toThrow(/contextCache/);
  });
});
