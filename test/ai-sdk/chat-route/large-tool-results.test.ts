import { randomUUID } from 'node:crypto';
import { stepCountIs, streamText, tool, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createChatHandler } from '../../../src/ai-sdk/index.js';
import { createAgentHistory, storedPreviewMarker } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { post, scriptedModel, textStep, usage } from '../fixtures.js';

const SECRET = 'zqchatroutesecret';
/** A file of 50 MB as a tool reads it: the secret at its start and near its end, multibyte text between. */
const FILE = `${SECRET} ${'row é 😀 "quoted" \\ line\n'.repeat(1_800_000)} ${SECRET}`;

const readFile = tool({
  description: 'Reads a file',
  inputSchema: z.object({ path: z.string() }),
  execute: async () => FILE,
});
const tools = { readFile };

/** Step 1 calls readFile, step 2 answers with text. */
const readFileStep = [
  { type: 'tool-call', toolCallId: 'call-file', toolName: 'readFile', input: JSON.stringify({ path: 'big.txt' }) },
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(20, 8) },
];

describe.each(BACKENDS)('a 50 MB tool result through the chat route on %s', (backend) => {
  const database = useTestDatabase(backend, { poolSize: 2 });

  it('should store the answer with a preview, read the result back byte-identical, send the next turn the preview, and leave none after redaction', async () => {
    expect(Buffer.byteLength(FILE)).toBeGreaterThan(50_000_000);
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread({ title: 'Files' });
    const models: Array<ReturnType<typeof scriptedModel>> = [];
    let ids = 0;
    const handler = createChatHandler<UIMessage>({
      getHistory: () => store,
      tools,
      generateMessageId: () => `a-${++ids}`,
      model: {
        streamText: ({ messages, abortSignal }) => {
          const steps = models.length === 0 ? [readFileStep, textStep('The file is long.')] : [textStep('Yes.')];
          const model = scriptedModel(steps as never);
          models.push(model);
          return streamText({ model, messages, tools, stopWhen: stepCountIs(2), abortSignal });
        },
      },
    });
    const response = await handler.POST(
      post({ threadId: thread.id, message: { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Read it' }] } }),
    );
    expect(response.status).toBe(200);
    await response.text();

    const stored = await store.getMessage(thread.id, 'a-1');
    expect(stored.status).toBe('completed');
    const outputOf = (message: typeof stored) =>
      (message.message.parts.find((candidate) => candidate.type === 'tool-readFile') as unknown as { output: string })
        .output;
    expect(outputOf(stored).startsWith(storedPreviewMarker)).toBe(true);
    const output = outputOf(await store.getMessage(thread.id, 'a-1', { include: 'payloads' }));
    expect(output.length === FILE.length && output === FILE).toBe(true);

    // The next turn's model gets the preview, not the 50 MB.
    const next = await handler.POST(
      post({ threadId: thread.id, message: { id: 'u-2', role: 'user', parts: [{ type: 'text', text: 'Sure?' }] } }),
    );
    await next.text();
    const prompt = JSON.stringify(models[1]!.doStreamCalls[0]!.prompt);
    expect(prompt).toContain(storedPreviewMarker);
    expect(prompt).toContain(SECRET);
    expect(prompt.length).toBeLessThan(20_000);

    await store.redactMessage(thread.id, 'a-1', { actor: 'dpo', reason: 'leaked' });
    const [left] = await database.admin.query<{ rows: number }>(
      'select count(*)::int as rows from agent_tool_payload where tenant_id = $1',
      [store.tenantId],
    );
    expect(left).toEqual({ rows: 0 });
    const [message] = await database.admin.query<{ found: boolean }>(
      'select strpos(parts::text, $2) > 0 as found from agent_message where tenant_id = $1 and message_id = $3',
      [store.tenantId, SECRET, 'a-1'],
    );
    expect(message).toEqual({ found: false });
  }, 600_000);
});
