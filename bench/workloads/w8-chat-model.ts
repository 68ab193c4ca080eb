// W8's model and tools, the same for every peer: a MockLanguageModelV4 that answers each turn in three steps (two
// weather tool calls, then a short text answer), so the answer is checkpointed three times. The tools are the ones
// the seeded history uses (bench/messages.ts), so the stored history passes the route's validation.
import { simulateReadableStream, tool, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

const anyInput = z.record(z.string(), z.unknown());
const seededTool = (description: string) => tool({ description, inputSchema: anyInput });

/** `getWeather` runs; the others only type the tool parts of the seeded history. */
export const W8_TOOLS = {
  getWeather: tool({
    description: 'Get the current temperature in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, tempC: 10 + (city.length % 20) }),
  }),
  searchDocs: seededTool('Search the documentation'),
  runSql: seededTool('Run a read-only SQL query'),
  fetchUrl: seededTool('Fetch a URL'),
  readFile: seededTool('Read a file'),
} satisfies ToolSet;

export const W8_INSTRUCTIONS = 'You are a concise assistant. Use the weather tool for weather questions.';

type StreamPart = Parameters<typeof simulateReadableStream>[0]['chunks'][number];

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

function toolStep(city: string, id: string): StreamPart[] {
  const input = JSON.stringify({ city });
  return [
    { type: 'tool-input-start', id, toolName: 'getWeather' },
    { type: 'tool-input-delta', id, delta: input },
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName: 'getWeather', input },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(1200, 20) },
  ];
}

const ANSWER = 'It is mild in Paris and a little cooler in Oslo. Take a light jacket for the evening. ';

function textStep(): StreamPart[] {
  return [
    { type: 'text-start', id: 't1' },
    ...ANSWER.split(/(?<= )/).map((delta) => ({ type: 'text-delta' as const, id: 't1', delta })),
    { type: 'text-end', id: 't1' },
    { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usage(1300, 24) },
  ];
}

/** The messages of each turn's first model call (the system message left out), in the order the turns ran. */
export const firstCallMessages: number[] = [];

/** A fresh model for one turn: three steps, two tool calls and a short answer, streamed without delays. */
export function w8Model(turn: string) {
  const steps = [toolStep('Paris', `call-${turn}-1`), toolStep('Oslo', `call-${turn}-2`), textStep()];
  let call = 0;
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      if (call === 0) firstCallMessages.push(prompt.filter((message) => message.role !== 'system').length);
      const chunks = steps[call++]!;
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs: null, initialDelayInMs: null }) } as never;
    },
  });
}

/** The user message of turn `turn`: what useChat sends. */
export function w8UserMessage(id: string) {
  return {
    id,
    role: 'user' as const,
    parts: [{ type: 'text' as const, text: 'What is the weather in Paris and Oslo?' }],
  };
}

/** The steps' count: each peer checks the answer it stored has this many `step-start` parts. */
export const W8_STEPS = 3;
