// A small rule-based model for the offline demo: deterministic, no network. It reads the prompt it is sent
// (after the context engine's prepareStep) and answers like a tool-using assistant would.
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';

type PromptMessage = {
  role: string;
  content: string | Array<{ type: string; text?: string; toolName?: string; output?: unknown }>;
};

const textOf = (message: PromptMessage | undefined) =>
  message === undefined
    ? ''
    : typeof message.content === 'string'
      ? message.content
      : message.content.map((part) => part.text ?? '').join(' ');

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

function respond(prompt: PromptMessage[]) {
  const last = prompt.at(-1);
  const estimatedInput = Math.ceil(JSON.stringify(prompt).length / 4);
  if (last?.role === 'tool') {
    const results = (last.content as Array<{ toolName?: string; output?: { value?: unknown } }>).map(
      (part) => `${part.toolName}: ${JSON.stringify(part.output?.value ?? part.output)}`,
    );
    const text = `Here is what I found. ${results.join('; ')}. Anything else you want me to check?`;
    return { text, usage: usage(estimatedInput, Math.ceil(text.length / 4)) };
  }
  const question = textOf([...prompt].reverse().find((message) => message.role === 'user')).toLowerCase();
  const city = /weather in ([a-z ]+?)[?.!]?$/.exec(question)?.[1];
  if (city) return { toolCall: { toolName: 'weather', input: { city } }, usage: usage(estimatedInput, 12) };
  const order = /order ([a-z0-9-]+)/.exec(question)?.[1];
  if (order)
    return { toolCall: { toolName: 'lookupOrder', input: { orderId: order } }, usage: usage(estimatedInput, 12) };
  const sawSummary = prompt.some((message) => textOf(message).includes('Summary of the earlier conversation'));
  const text =
    `You asked: "${question}". ` +
    'Planning a trip is mostly about timing, budget and a short list of places you really want to see. ' +
    'I would book the train early, keep one free afternoon per city, and check opening hours before you go. ' +
    (sawSummary ? 'I also kept in mind what we discussed earlier (from the summary).' : '');
  return { text, usage: usage(estimatedInput, Math.ceil(text.length / 4)) };
}

let callCount = 0;

/** The deterministic local model: a tool call when a tool fits the question, a text answer otherwise. */
export function createDemoModel() {
  return new MockLanguageModelV4({
    provider: 'local',
    modelId: 'rule-based',
    doStream: async ({ prompt }) => {
      const answer = respond(prompt as unknown as PromptMessage[]);
      const id = `call-${++callCount}`;
      const chunks: LanguageModelV4StreamPart[] = answer.toolCall
        ? [
            {
              type: 'tool-call' as const,
              toolCallId: id,
              toolName: answer.toolCall.toolName,
              input: JSON.stringify(answer.toolCall.input),
            },
            {
              type: 'finish' as const,
              finishReason: { unified: 'tool-calls' as const, raw: undefined },
              usage: answer.usage,
            },
          ]
        : [
            { type: 'text-start' as const, id },
            ...answer.text!.split(/(?<= )/).map((delta) => ({ type: 'text-delta' as const, id, delta })),
            { type: 'text-end' as const, id },
            {
              type: 'finish' as const,
              finishReason: { unified: 'stop' as const, raw: undefined },
              usage: answer.usage,
            },
          ];
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs: null }) };
    },
  });
}
