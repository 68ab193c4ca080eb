import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, VersionConflictError } from '../../src/errors/index.js';
import { createMemoryContextStore, createSharedMemory } from '../../src/testing/index.js';

describe('createSharedMemory', () => {
  it('should refuse a stale version with VersionConflictError and write nothing', async () => {
    const shared = createSharedMemory();
    const first = createMemoryContextStore({ memory: { shared, threadId: 't1', userId: 'alice' } });
    const second = createMemoryContextStore({ memory: { shared, threadId: 't2', userId: 'alice' } });
    await first.updateWorkingMemory({ content: 'one', expectedVersion: 0 });
    await expect(second.updateWorkingMemory({ content: 'two', expectedVersion: 0 })).rejects.toThrow(
      new VersionConflictError({ entity: 'working memory', expectedVersion: 0, actualVersion: 1 }),
    );
    expect([...shared.workingMemories]).toEqual([
      ['user:alice', { id: 'working-memory-1', scope: 'user', content: 'one', version: 1 }],
    ]);
  });

  it('should refuse bad input with InvalidArgumentError naming it, and write nothing', async () => {
    const shared = createSharedMemory();
    const store = createMemoryContextStore({ memory: { shared, threadId: 't1', userId: 'alice' } });
    await expect(store.updateWorkingMemory({ content: 42 as never, expectedVersion: 0 })).rejects.toThrow(
      new InvalidArgumentError({ argument: 'content', value: 42, message: 'expected a string.' }),
    );
    await expect(store.updateWorkingMemory({ content: 'x', expectedVersion: 1.5 })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(store.loadMemory({ query: 'x', limit: -1 })).rejects.toThrow(InvalidArgumentError);
    expect(shared.workingMemories.size).toBe(0);
    expect(() => createMemoryContextStore({ memory: { shared, threadId: 't1', userId: 'bob' } })).toThrow(
      new InvalidArgumentError({
        argument: 'memory.threadId',
        value: 't1',
        message: 'expected a thread id no other store of this shared memory has.',
      }),
    );
    expect(() => createSharedMemory({ scope: 'tenant' as never })).toThrow(InvalidArgumentError);
  });

  it("should recall only the user's other live, eligible messages, and nothing after a redaction", async () => {
    const shared = createSharedMemory();
    const first = createMemoryContextStore({ memory: { shared, threadId: 't1', userId: 'alice' } });
    first.appendMessage({
      message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'I ride a gravel bike.' }] },
    });
    first.appendMessage({
      message: { id: 'm2', role: 'user', parts: [{ type: 'text', text: 'My gravel bike is red.' }] },
    });
    const second = createMemoryContextStore({ memory: { shared, threadId: 't2', userId: 'alice' } });
    second.appendMessage({ message: { id: 'm3', role: 'user', parts: [{ type: 'text', text: 'gravel bike' }] } });
    const recalled = async () => (await second.loadMemory({ query: 'gravel bike', limit: 5 })).recalled;
    expect((await recalled()).map((item) => [item.id, item.sourceThreadId, item.score])).toEqual([
      ['message:m1', 't1', 2],
      ['message:m2', 't1', 2],
    ]);
    first.redactMessage(1);
    expect((await recalled()).map((item) => item.id)).toEqual(['message:m2']);
  });
});
