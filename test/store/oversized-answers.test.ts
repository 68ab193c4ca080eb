import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitAssistantParts } from '../../src/store/fit-assistant-parts.js';
import { createAgentHistory, storedPreviewMarker, type OversizedToolPayload } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

const MIB = 1_048_576;
/** A tool output of about 2 MB: the answer is twice the default `maxMessageBytes`. */
const bigOutput = { rows: Array.from({ length: 20_000 }, (_, index) => ({ index, text: 'x'.repeat(90) })) };
const toolPart = (output: unknown) => ({
  type: 'tool-report',
  toolCallId: 'call-1',
  state: 'output-available',
  input: { query: 'all rows' },
  output,
});
const answerParts = [
  { type: 'step-start' },
  toolPart(bigOutput),
  { type: 'step-start' },
  { type: 'text', text: 'The report has 20000 rows.', state: 'done' },
];

describe('fitAssistantParts', () => {
  it('should leave a message that fits untouched, and fit any message whose text fits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 3000 }), fc.jsonValue({ maxDepth: 3 })), { maxLength: 6 }),
        fc.integer({ min: 200, max: 5000 }),
        async (outputs, limit) => {
          const parts = outputs.map((output, index) => ({ ...toolPart(output), toolCallId: `call-${index}` }));
          const size = Buffer.byteLength(JSON.stringify(parts));
          const fitted = await fitAssistantParts(parts, { limit, metadataBytes: 2, threadId: 't', messageId: 'm' });
          expect(fitted.byteSize).toBe(Buffer.byteLength(JSON.stringify(fitted.parts)) + 2);
          if (size + 2 <= limit) expect(fitted.parts).toBe(parts);
          // Only the payloads change, and each one either stays whole or becomes a marked preview.
          fitted.parts.forEach((part, index) => {
            expect({ ...part, output: undefined }).toEqual({ ...parts[index], output: undefined });
            if (part.output !== parts[index]!.output) expect(String(part.output)).toMatch(/^\[agent-history: stored/);
          });
          // A second pass changes nothing more: a preview is never shortened again.
          const again = await fitAssistantParts(fitted.parts, {
            limit,
            metadataBytes: 2,
            threadId: 't',
            messageId: 'm',
          });
          expect(again.parts.filter((part, index) => part !== fitted.parts[index]).length).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe.each(BACKENDS)('an answer larger than maxMessageBytes on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should be stored completed with the oversized tool output as a preview, and the thread go on', async () => {
    const kept: OversizedToolPayload[] = [];
    const store = createAgentHistory({
      db: database.db,
      oversizedToolPayloads: { previewCharacters: 100, store: async (payload) => (kept.push(payload), 'blob-1') },
    }).forTenant(randomUUID());
    const thread = await store.createThread();
    const run = await store.startRun(thread.id);
    await store.appendMessage(thread.id, { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Report?' }] });
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1', runId: run.id });
    expect(Buffer.byteLength(JSON.stringify(answerParts))).toBeGreaterThan(2 * MIB);

    const checkpointed = await store.checkpointMessage(thread.id, 'a-1', { parts: answerParts.slice(0, 2) });
    expect(checkpointed.status).toBe('streaming');
    const final = await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: answerParts });
    await store.finishRun(run.id, { status: 'completed' });

    expect(final.status).toBe('completed');
    expect(final.byteSize).toBeLessThanOrEqual(MIB);
    const [row] = await database.admin.query<{ status: string; parts: Array<Record<string, unknown>> }>(
      "select status, parts from agent_message where thread_id = $1 and message_id = 'a-1'",
      [thread.id],
    );
    const stored = row!.parts[1]!;
    expect(row!.status).toBe('completed');
    expect(stored.input).toEqual({ query: 'all rows' });
    const bytes = Buffer.byteLength(JSON.stringify(bigOutput));
    expect(stored.output).toBe(
      `${storedPreviewMarker} output of ${bytes} bytes, too large for the message; the first 100 characters follow, ` +
        `the whole output is kept as "blob-1"]\n${JSON.stringify(bigOutput).slice(0, 100)}`,
    );
    expect(row!.parts[3]).toEqual(answerParts[3]);
    expect(kept.map(({ messageId, toolCallId, field, byteSize }) => [messageId, toolCallId, field, byteSize])).toEqual([
      ['a-1', 'call-1', 'output', bytes],
      ['a-1', 'call-1', 'output', bytes],
    ]);
    expect(kept[1]!.value).toEqual(bigOutput);
    expect((await store.getRun(run.id)).status).toBe('completed');
    const next = await store.appendMessage(thread.id, {
      id: 'u-2',
      role: 'user',
      parts: [{ type: 'text', text: 'Thanks' }],
    });
    expect(next.stored.sequence).toBe(3);
  });

  it('should still refuse a client message over the limit', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await expect(
      store.appendMessage(thread.id, { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(MIB + 1) }] }),
    ).rejects.toMatchObject({ name: 'MessageTooLargeError' });
  });
});
