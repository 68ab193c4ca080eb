import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, type TokenCounter } from '../../src/index.js';
import { createCachedTokenCounter } from '../../src/tokens/token-counter.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const long = (text: string) => text.padEnd(2_000, '.');

/** A cached counter over a counting function that records each text it was asked. */
function recordingCounter() {
  const counted: string[] = [];
  const counter = createCachedTokenCounter('test', (text) => {
    counted.push(text);
    return text.length;
  });
  return { counter, counted };
}

describe('createCachedTokenCounter', () => {
  it('should keep cached counts per scope: one scope never hits what another counted', () => {
    const { counter, counted } = recordingCounter();
    const secret = long('the password is hunter2');
    counter.scoped!('tenant-a').count(secret);
    counter.scoped!('tenant-b').count(secret);
    counter.count(secret);
    expect(counted).toHaveLength(3);
    counter.scoped!('tenant-a').count(secret);
    expect(counted).toHaveLength(3);
  });

  it('should count each distinct (scope, text) pair once, whatever the scopes and texts hold', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 })), { maxLength: 12 }),
        (pairs) => {
          const { counter, counted } = recordingCounter();
          // Texts long enough to be cached; a scope ending where a text begins must not meet the shorter scope.
          for (const [scope, text] of pairs) counter.scoped!(scope).count(`${text}${long('')}`);
          expect(counted).toHaveLength(new Set(pairs.map((pair) => JSON.stringify(pair))).size);
        },
      ),
    );
  });
});

describe.each(BACKENDS)('the store on %s', (backend) => {
  const database = useTestDatabase(backend);

  it("should count each tenant's messages through a counter scoped to that tenant", async () => {
    const scopes: string[] = [];
    const base: TokenCounter = {
      id: 'scoped-test',
      count: (text) => text.length,
      scoped: (scope) => {
        scopes.push(scope);
        return { id: 'scoped-test', count: (text) => text.length };
      },
    };
    const history = createAgentHistory({ db: database.db, tokenCounter: base, appendBatching: false });
    const tenants = [randomUUID(), randomUUID()];
    for (const tenant of tenants) {
      const store = history.forTenant(tenant);
      const thread = await store.createThread({});
      await store.appendMessage(thread.id, { id: 'm-1', role: 'user', parts: [{ type: 'text', text: 'same text' }] });
    }
    expect(scopes).toEqual(tenants);
  });

  it('should count a long message through countAsync and a short one at once, storing the same counts', async () => {
    const asked: number[] = [];
    const counter: TokenCounter = {
      id: 'async-test',
      count: (text) => text.length,
      countAsync: async (text) => (asked.push(text.length), text.length),
    };
    const store = createAgentHistory({ db: database.db, tokenCounter: counter }).forTenant(randomUUID());
    const thread = await store.createThread({});
    const short = await store.appendMessage(thread.id, {
      id: 's',
      role: 'user',
      parts: [{ type: 'text', text: 'hi' }],
    });
    expect(asked).toEqual([]);
    const text = 'word '.repeat(10_000);
    const long = await store.appendMessage(thread.id, { id: 'l', role: 'user', parts: [{ type: 'text', text }] });
    expect(asked).toContain(text.length);
    expect([short.stored.tokenCount, long.stored.tokenCount]).toEqual([2, text.length]);
  });
});
