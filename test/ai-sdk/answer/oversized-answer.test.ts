import { isStepCount, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createChatHandler } from '../../../src/ai-sdk/index.js';
import { storedPreviewMarker } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { eventually, newThread, post, rowsOf, runsOf, scriptedModel, textStep, usage } from '../fixtures.js';

/** A tool whose output is about 2 MB: twice the default `maxMessageBytes`. */
const rows = Array.from({ length: 20_000 }, (_, index) => ({ index, text: 'x'.repeat(90) }));
const report = tool({
  description: 'All rows of the report',
  inputSchema: z.object({ query: z.string() }),
  execute: async () => ({ rows }),
});
const reportCallStep = [
  { type: 'tool-call', toolCallId: 'call-1', toolName: 'report', input: JSON.stringify({ query: 'all' }) },
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(20, 8) },
] as const;

describe.each(BACKENDS)('a chat answer larger than maxMessageBytes on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should end completed with the tool output stored as a preview, end its run, and take the next message', async () => {
    const { history, threadId } = await newThread(database);
    let ids = 0;
    const handler = createChatHandler({
      getHistory: () => history,
      tools: { report },
      generateMessageId: () => `a-${++ids}`,
      model: {
        streamText: ({ messages, abortSignal }) =>
          streamText({
            model: scriptedModel([[...reportCallStep] as never, textStep('The report has 20000 rows.')]),
            tools: { report },
            stopWhen: isStepCount(2),
            messages,
            abortSignal,
          }),
      },
    });
    const first = await handler.POST(
      post({ threadId, message: { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Report?' }] } }),
    );
    expect(first.status).toBe(200);
    expect(await first.text()).toContain('"type":"finish"');
    const [, answer] = await eventually(async () => {
      const stored = await rowsOf(database, threadId);
      expect(stored[1]!.status).toBe('completed');
      return stored;
    });
    const toolPart = (answer!.parts as Array<Record<string, unknown>>).find((part) => part.type === 'tool-report')!;
    expect(toolPart.state).toBe('output-available');
    expect(String(toolPart.output)).toMatch(
      new RegExp(`^${storedPreviewMarker.replace(/[[\]]/g, '\\$&')} output of \\d{7} bytes`),
    );
    await eventually(async () =>
      expect((await runsOf(database, threadId)).map((run) => run.status)).toEqual(['completed']),
    );

    const second = await handler.POST(
      post({ threadId, message: { id: 'u-2', role: 'user', parts: [{ type: 'text', text: 'Thanks' }] } }),
    );
    expect(second.status).toBe(200);
    await second.text();
  });
});
