// Memory across threads end to end on the Postgres store (PGlite and PostgreSQL 15, as the app login under forced
// row-level security): what a user said in one thread reaches the model in their next thread, by full-text and by
// vector, never in another user's or another tenant's thread, and no longer once its source is redacted.
import { randomUUID } from 'node:crypto';
import { generateText, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../../src/ai-sdk/index.js';
import { createAgentHistory, type MemoryEmbedder, type TenantHistory } from '../../../src/index.js';
import { mockEmbedding } from '../../store/memory-support.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { tokenCounter } from '../../context/fixtures.js';

const preference = 'I prefer metric units for every measurement';
const answer = {
  content: [{ type: 'text', text: 'Noted.' }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  },
  warnings: [],
};
const textOf = (prompt: readonly ModelMessage[]) => JSON.stringify(prompt);

describe.each(BACKENDS)('memory across threads through the context manager on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** A new thread of `store` asking `question`: the prompt the model was sent. */
  async function ask(store: TenantHistory, question: string, embedder?: MemoryEmbedder) {
    const thread = await store.createThread();
    await store.appendMessage(thread.id, { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: question }] });
    const context = createContextManager({
      store: store.contextStore(thread.id, embedder ? { embedder } : {}),
      model: 'gpt-4o',
      tokenCounter,
      instructions: 'You answer questions.',
      policy: { memory: { workingMemory: 'include', recall: { mode: 'auto' } } },
    });
    const model = new MockLanguageModelV4({ doGenerate: async () => answer as never });
    await generateText({ model, messages: await context.initialMessages(), prepareStep: context.prepareStep });
    return textOf(model.doGenerateCalls[0]!.prompt as ModelMessage[]);
  }

  it('should bring a preference of one thread to the next by full-text and by vector, to no one else, until redacted', async () => {
    const tenantId = randomUUID();
    const history = createAgentHistory({ db: database.db });
    const alice = history.forTenant(tenantId, { userId: 'alice' });
    const first = await alice.createThread();
    await alice.appendMessage(first.id, { id: 'pref', role: 'user', parts: [{ type: 'text', text: preference }] });

    // Full-text: the question shares a word with the preference.
    expect(await ask(alice, 'Which units should the report use?')).toContain(preference);
    // Vector: no shared word ("measurements" and "metric" are one concept to the mock embedding model).
    const { embedder } = mockEmbedding();
    expect(await alice.embedPendingMemory({ embedder })).toMatchObject({ embedded: expect.any(Number) });
    expect(await ask(alice, 'Which system suits me?', embedder)).toContain(preference);
    expect(await ask(alice, 'Which system suits me?')).not.toContain(preference);

    // Another user of the tenant, another tenant with the same user id, and a tenant-wide store of another tenant.
    const strangers = [
      history.forTenant(tenantId, { userId: 'bob' }),
      history.forTenant(randomUUID(), { userId: 'alice' }),
      history.forTenant(randomUUID()),
    ];
    for (const stranger of strangers) {
      await stranger.embedPendingMemory({ embedder });
      expect(await ask(stranger, 'Which units should the report use?', embedder)).not.toContain(preference);
    }

    // Redacted at its source: gone from recall, by either way of finding it.
    await alice.redactMessage(first.id, 'pref', { actor: 'test', reason: 'user asked' });
    expect(await ask(alice, 'Which units should the report use?', embedder)).not.toContain('metric');
  });
});
