import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAgentHistory, NotFoundError } from '../../src/index.js';
import type { StoredMessagePart } from '../../src/schema/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

// Tool approvals: a continuation under a run that is not the thread's is a typed error naming the run (as
// appendMessage's), and the message is left as it was.
describe.each(BACKENDS)('reopenAssistantMessage with a foreign run on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should refuse a missing run, or one of another thread, with NotFoundError and change nothing', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    const otherRun = (await store.startRun((await store.createThread()).id)).id;
    const parts: StoredMessagePart[] = [{ type: 'text', text: 'the answer' }];
    await store.appendMessage(thread, { id: 'u', role: 'user', parts: [{ type: 'text', text: 'q' }] });
    const { stored } = await store.appendMessage(thread, { id: 'a', role: 'assistant', parts });
    for (const runId of [randomUUID(), otherRun]) {
      const error = await store
        .reopenAssistantMessage(thread, 'a', {
          expectedParts: parts,
          parts: [...parts, { type: 'text', text: 'more' }],
          runId,
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ entity: 'run', id: runId });
    }
    const after = await store.getMessage(thread, 'a');
    expect([after.status, after.message.parts, after.contentVersion]).toEqual([
      'completed',
      parts,
      stored.contentVersion,
    ]);
  });
});
