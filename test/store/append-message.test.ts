import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  InvalidMessageError,
  InvalidTenantError,
  MessageTooLargeError,
  NotFoundError,
} from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { userMessage } from '../support/fixtures.js';

const toolRoundTrip = {
  id: 'a-tool',
  role: 'assistant' as const,
  parts: [
    { type: 'step-start' },
    {
      type: 'tool-weather',
      toolCallId: 'call-1',
      state: 'output-available',
      input: { city: 'Paris' },
      output: { tempC: 18 },
    },
    { type: 'step-start' },
    { type: 'text', text: 'It is 18C in Paris.', state: 'done' },
  ],
  metadata: { model: 'gpt-4o' },
};

describe.each(BACKENDS)('appendMessage on %s', (backend) => {
  const database = useTestDatabase(backend);

  const store = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());

  it('should give sequences 1, 2, 3 and round-trip the UIMessage exactly', async () => {
    const tenant = store();
    const thread = await tenant.createThread({ userId: 'u1', title: 'Trip' });
    const first = await tenant.appendMessage(thread.id, userMessage('u-1', 'Weather in Paris?'));
    const second = await tenant.appendMessage(thread.id, toolRoundTrip);
    const third = await tenant.appendMessage(thread.id, userMessage('u-2', 'Thanks'));
    expect([first, second, third].map((result) => [result.created, result.stored.sequence])).toEqual([
      [true, 1],
      [true, 2],
      [true, 3],
    ]);
    const page = await tenant.listMessages(thread.id);
    expect(page.messages.map((stored) => stored.message)).toEqual([
      userMessage('u-2', 'Thanks'),
      toolRoundTrip,
      userMessage('u-1', 'Weather in Paris?'),
    ]);
    expect(page.messages[1]!.tokenCount).toBeGreaterThan(5);
    // The id of the context engine's count, so the engine sums stored counts instead of re-tokenizing.
    expect(page.messages[1]!.tokenCounterId).toBe('o200k_base/gpt-tokenizer@4/model-messages-v2');
    const [row] = await database.admin.query<{ next_sequence: string }>(
      'select next_sequence from agent_thread where id = $1',
      [thread.id],
    );
    expect(Number(row!.next_sequence)).toBe(3);
  });

  it('should accept a message written `as const` (readonly parts) and give it back typed as given', async () => {
    const tenant = store();
    const thread = await tenant.createThread();
    const message = { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] } as const;
    const { stored } = await tenant.appendMessage(thread.id, message);
    const text: 'Weather in Paris?' = stored.message.parts[0].text;
    expect(text).toBe('Weather in Paris?');
    expect(stored.message).toEqual(message);
  });

  it('should return the stored row on a retry by message id or client request id, never a duplicate', async () => {
    const tenant = store();
    const thread = await tenant.createThread();
    const first = await tenant.appendMessage(thread.id, userMessage('u-1', 'hello'), { clientRequestId: 'req-1' });
    const byId = await tenant.appendMessage(thread.id, userMessage('u-1', 'hello'));
    const byRequest = await tenant.appendMessage(thread.id, userMessage('u-other', 'hello'), {
      clientRequestId: 'req-1',
    });
    expect(first.created).toBe(true);
    expect([byId.created, byId.stored.sequence, byRequest.created, byRequest.stored.sequence]).toEqual([
      false,
      1,
      false,
      1,
    ]);
    expect(byRequest.stored.message).toEqual(userMessage('u-1', 'hello'));
    const rows = await database.admin.query('select sequence from agent_message where thread_id = $1', [thread.id]);
    expect(rows).toHaveLength(1);
  });

  it('should reject bad input with a typed error that names the value, and write nothing', async () => {
    const tenant = store();
    const thread = await tenant.createThread();
    await expect(tenant.appendMessage(thread.id, { id: 'x', role: 'user', parts: 'nope' } as never)).rejects.toThrow(
      InvalidMessageError,
    );
    await expect(tenant.appendMessage(thread.id, { id: 'x', role: 'robot', parts: [] } as never)).rejects.toThrow(
      /"robot"/,
    );
    await expect(tenant.appendMessage(thread.id, userMessage('x', 'a\u0000b'))).rejects.toThrow(/NUL/);
    await expect(tenant.appendMessage(thread.id, userMessage('x', 'a\ud800b'))).rejects.toThrow(/surrogate/);
    await expect(tenant.appendMessage(randomUUID(), userMessage('x', 'hi'))).rejects.toThrow(NotFoundError);
    const small = createAgentHistory({ db: database.db, maxMessageBytes: 100 }).forTenant(tenant.tenantId);
    await expect(small.appendMessage(thread.id, userMessage('big', 'x'.repeat(200)))).rejects.toThrow(
      MessageTooLargeError,
    );
    expect(() => createAgentHistory({ db: database.db }).forTenant('not-a-uuid')).toThrow(InvalidTenantError);
    const rows = await database.admin.query('select 1 from agent_message where thread_id = $1', [thread.id]);
    expect(rows).toHaveLength(0);
    const [threadRow] = await database.admin.query<{ next_sequence: string }>(
      'select next_sequence from agent_thread where id = $1',
      [thread.id],
    );
    expect(Number(threadRow!.next_sequence)).toBe(0);
  });

  it("should treat another tenant's thread exactly like a missing one", async () => {
    const owner = store();
    const thread = await owner.createThread();
    const intruder = store();
    const foreign = await intruder.appendMessage(thread.id, userMessage('x', 'hi')).catch((error: unknown) => error);
    const missing = await intruder.appendMessage(randomUUID(), userMessage('x', 'hi')).catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(NotFoundError);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((foreign as NotFoundError).code).toBe((missing as NotFoundError).code);
    await expect(intruder.getThread(thread.id)).rejects.toThrow(NotFoundError);
  });
});
