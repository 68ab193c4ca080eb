import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, type TokenCounter } from '../../src/index.js';
import { text } from '../support/fixtures.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

// An app's own counter reaches the append statement's integer literals (and the checkpoint's integer column): an
// estimate (`length / 4`) must be stored, and a broken one refused with a typed error that writes nothing.
describe.each(BACKENDS)("an app's token counter output on %s", (backend) => {
  const database = useTestDatabase(backend);

  it('should store an estimating counter’s fractional count rounded up, alone and in a combined batch', async () => {
    const counter: TokenCounter = { id: 'estimate/chars-4', count: (value) => value.length / 4 };
    const store = createAgentHistory({ db: database.db, tokenCounter: counter }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    const texts = ['abcde', 'abcdefg', 'x', 'a much longer text of some characters'];
    // Concurrent appends are combined into one batch statement; the first one alone goes as the single append.
    const results = await Promise.all(
      texts.map((value, index) =>
        store.appendMessage(thread, { id: `m-${index}`, role: 'user', parts: [text(value)] }),
      ),
    );
    for (const { stored } of results) {
      expect(Number.isInteger(stored.tokenCount)).toBe(true);
      expect(stored.tokenCount).toBeGreaterThan(0);
    }
    const { messages } = await store.listMessages(thread);
    expect(messages).toHaveLength(texts.length);
  });

  it('should refuse a count that is not a finite number ≥ 0, or a malformed counter id, and write nothing', async () => {
    const tenantId = randomUUID();
    const thread = (await createAgentHistory({ db: database.db }).forTenant(tenantId).createThread()).id;
    const badCount = fc.constantFrom(Number.NaN, Infinity, -Infinity, -1, -0.5, 2 ** 53, Number.MAX_VALUE);
    await fc.assert(
      fc.asyncProperty(badCount, async (count) => {
        const counter: TokenCounter = { id: 'broken', count: () => count };
        const store = createAgentHistory({ db: database.db, tokenCounter: counter }).forTenant(tenantId);
        const error = await store
          .appendMessage(thread, { id: randomUUID(), role: 'user', parts: [text('hello')] })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).argument).toBe('tokenCounter.count');
      }),
      { numRuns: 20 },
    );
    for (const id of ['a\u0000b', 'x'.repeat(201), '\ud800']) {
      const store = createAgentHistory({
        db: database.db,
        tokenCounter: { id, count: (value) => value.length },
      }).forTenant(tenantId);
      const error = await store
        .appendMessage(thread, { id: randomUUID(), role: 'user', parts: [text('hello')] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe('tokenCounter.id');
    }
    const { messages } = await createAgentHistory({ db: database.db }).forTenant(tenantId).listMessages(thread);
    expect(messages).toEqual([]);
  });
});
