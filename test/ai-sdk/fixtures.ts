import { randomUUID } from 'node:crypto';
import {
  readUIMessageStream,
  simulateReadableStream,
  streamText,
  tool,
  type InferUITools,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import type { ChatModelSource } from '../../src/ai-sdk/index.js';
import { createAgentHistory } from '../../src/index.js';
import type { TestDatabase } from '../support/test-database.js';
import { SETTLE_TIMEOUT_MS } from '../support/time-limits.js';

export const weather = tool({
  description: 'Get the weather in a city',
  inputSchema: z.object({ city: z.string() }),
  outputSchema: z.object({ city: z.string(), tempC: z.number() }),
  execute: async ({ city }) => ({ city, tempC: 18 }),
});
export const tools = { weather };

export const metadataSchema = z
  .object({
    createdAt: z.coerce.date().optional(),
    usage: z
      .object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() })
      .partial()
      .optional(),
  })
  .optional();
export const dataSchemas = { progress: z.object({ percent: z.number() }) };

export type ChatMessage = UIMessage<
  z.infer<typeof metadataSchema>,
  { progress: { percent: number } },
  InferUITools<typeof tools>
>;
export const schemas = { tools, metadataSchema, dataSchemas };

type StreamPart = Parameters<typeof simulateReadableStream>[0]['chunks'][number];

export const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** The chunks of one step that answers with text, split into words. */
export const textStep = (text: string, [input, output] = [10, 5]): StreamPart[] => [
  { type: 'text-start', id: 't1' },
  ...text.split(/(?<= )/).map((delta) => ({ type: 'text-delta', id: 't1', delta })),
  { type: 'text-end', id: 't1' },
  { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usage(input, output) },
];

/** The chunks of one step that calls the weather tool. */
export const weatherCallStep = (city: string, id = 'call-1'): StreamPart[] => [
  { type: 'tool-input-start', id, toolName: 'weather' },
  { type: 'tool-input-delta', id, delta: JSON.stringify({ city }) },
  { type: 'tool-input-end', id },
  { type: 'tool-call', toolCallId: id, toolName: 'weather', input: JSON.stringify({ city }) },
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(20, 8) },
];

/** A model answering step i with `steps[i]`: chunks (with a delay between them) or a stream of its own. */
export function scriptedModel(steps: Array<StreamPart[] | ReadableStream<StreamPart>>, { chunkDelayInMs = 0 } = {}) {
  return new MockLanguageModelV4({
    doStream: steps.map((step) => ({
      stream: Array.isArray(step)
        ? simulateReadableStream({ chunks: step, chunkDelayInMs, initialDelayInMs: null })
        : step,
    })) as never,
  });
}

/** A chat model source whose `streamText` answers one step from a {@link scriptedModel} of `steps`. */
export const scriptedSource = (steps: Parameters<typeof scriptedModel>[0]): ChatModelSource<typeof tools> => ({
  streamText: ({ messages, abortSignal }) => streamText({ model: scriptedModel(steps), messages, abortSignal }),
});

/** A stream that sends `before`, then waits for `release()`, then sends `after`. */
export function gatedStream(before: StreamPart[], after: StreamPart[]) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const stream = new ReadableStream<StreamPart>({
    async start(controller) {
      for (const chunk of before) controller.enqueue(chunk);
      await gate;
      for (const chunk of after) controller.enqueue(chunk);
      controller.close();
    },
  });
  return { stream, release };
}

/** A POST request to the chat route with `body` as JSON. */
export const post = (body: unknown) =>
  new Request('http://localhost/api/chat', { method: 'POST', body: JSON.stringify(body) });

/** Reads a UI message stream to its end; returns the last message and the chunk types. */
export async function readAnswer(stream: ReadableStream<UIMessageChunk>) {
  const [forMessage, forChunks] = stream.tee();
  const chunks: string[] = [];
  const collecting = (async () => {
    for await (const chunk of forChunks as unknown as AsyncIterable<UIMessageChunk>) chunks.push(chunk.type);
  })();
  let message: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({ stream: forMessage })) message = snapshot;
  await collecting;
  return { message: message!, chunks };
}

/** A new tenant's store with one thread, on the given database. */
export async function newThread(database: TestDatabase, options: { maxMessageBytes?: number; leaseMs?: number } = {}) {
  const history = createAgentHistory({ db: database.db, ...options }).forTenant(randomUUID());
  const thread = await history.createThread({ userId: 'u1', title: 'Weather' });
  return { history, threadId: thread.id };
}

/** Reads the thread's rows directly (bypassing the store and RLS). */
export async function rowsOf(database: TestDatabase, threadId: string) {
  return database.admin.query<{
    message_id: string;
    role: string;
    status: string;
    context_state: string;
    exclusion_reason: string | null;
    parts: unknown;
    metadata: Record<string, unknown>;
    run_id: string | null;
    sequence: string | number;
  }>(
    'select message_id, role, status, context_state, exclusion_reason, parts, metadata, run_id, sequence from agent_message where thread_id = $1 order by sequence',
    [threadId],
  );
}

export async function runsOf(database: TestDatabase, threadId: string) {
  return database.admin.query<{
    id: string;
    status: string;
    input_tokens: number | null;
    output_tokens: number | null;
    error: unknown;
  }>('select id, status, input_tokens, output_tokens, error from agent_run where thread_id = $1 order by started_at', [
    threadId,
  ]);
}

/** Waits until `check` passes (polling the database), for at most `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = SETTLE_TIMEOUT_MS): Promise<T> {
  const start = Date.now();
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() - start > timeoutMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
