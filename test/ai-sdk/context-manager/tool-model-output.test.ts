import { convertToModelMessages, generateText, isStepCount, tool, type ModelMessage, type UIMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import type { ContextReport } from '../../../src/context/index.js';
import { resolveModelProfile } from '../../../src/tokens/model-profile.js';
import { storeOf, tokenCounter, user } from '../../context/fixtures.js';
import { countSentTokens } from '../../support/count-sent-tokens.js';
import { createAgentHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { randomUUID } from 'node:crypto';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const forecast = { city: 'Rome', hours: Array.from({ length: 200 }, (_x, hour) => ({ hour, tempC: 18, wind: 'NW' })) };

// A tool whose model output is much shorter than its stored output, async (allowed in v7), with an image.
const weather = tool({
  description: 'Get the forecast for a city, with a radar image',
  inputSchema: z.object({ city: z.string() }),
  execute: async () => forecast,
  toModelOutput: async ({ output }) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return {
      type: 'content' as const,
      value: [
        { type: 'text' as const, text: `${output.city}: ${output.hours.length} hours, 18C` },
        { type: 'file' as const, mediaType: 'image/png', data: { type: 'data' as const, data: PIXEL } },
      ],
    };
  },
});
const tools = { weather };

const toolCall = {
  content: [{ type: 'tool-call' as const, toolCallId: 'call-1', toolName: 'weather', input: '{"city":"Rome"}' }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' },
  usage,
  warnings: [],
};
const answer = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage,
  warnings: [],
});

// The engine tags the messages it builds with `agentHistoryRef` (where they came from); the content is compared.
const toolMessage = (messages: readonly { role: string }[]) => {
  const found = messages.find((message) => message.role === 'tool') as Record<string, unknown> | undefined;
  if (!found) return undefined;
  const { agentHistoryRef: _ref, ...rest } = found;
  return rest;
};

describe.each(['memory', ...BACKENDS] as const)(
  'earlier turns rebuilt from the %s store and toModelOutput',
  (backend) => {
    const database = backend === 'memory' ? undefined : useTestDatabase(backend);

    /** The context store of a thread holding `history`: in memory, or written through the real store. */
    async function storeHolding(history: UIMessage[]) {
      if (!database) return storeOf(history as never);
      const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
      const thread = await store.createThread({ userId: 'u1' });
      for (const message of history) await store.appendMessage(thread.id, message as never);
      return store.contextStore(thread.id);
    }

    it('should send turn 2 the same tool result as the live step got, converted as convertToModelMessages({ tools })', async () => {
      // Turn 1, live: the AI SDK runs the tool and converts its output with toModelOutput for the next step.
      const live = new MockLanguageModelV4({ doGenerate: [toolCall, answer('18C in Rome.')] });
      await generateText({ model: live, tools, prompt: 'Weather in Rome?', stopWhen: isStepCount(2) });
      const liveToolMessage = toolMessage(live.doGenerateCalls[1]!.prompt);
      expect(liveToolMessage).toBeDefined();

      // What the chat route stores of turn 1 (the UI message), then turn 2 rebuilt from the store.
      const history: UIMessage[] = [
        user('u1', 'Weather in Rome?') as UIMessage,
        {
          id: 'a1',
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'tool-weather',
              toolCallId: 'call-1',
              state: 'output-available',
              input: { city: 'Rome' },
              output: forecast,
            },
            { type: 'step-start' },
            { type: 'text', text: '18C in Rome.', state: 'done' },
          ],
        } as UIMessage,
        user('u2', 'And tomorrow?') as UIMessage,
      ];
      const reports: ContextReport[] = [];
      const context = createContextManager({
        store: await storeHolding(history),
        model: 'gpt-4o',
        tools,
        tokenCounter,
        onReport: (report) => reports.push(report),
      });
      const messages = await context.initialMessages();
      const expected = await convertToModelMessages(history, { tools });
      expect(toolMessage(messages)).toEqual(toolMessage(expected));

      const rebuilt = new MockLanguageModelV4({ doGenerate: [answer('Same tomorrow.')] });
      await generateText({ model: rebuilt, tools, messages, prepareStep: context.prepareStep });
      expect(toolMessage(rebuilt.doGenerateCalls[0]!.prompt)).toEqual(liveToolMessage);

      // Counted as converted: never below an independent count of what is sent (image at the profile's price).
      const prices = resolveModelProfile({ modelId: 'gpt-4o' });
      const sent = countSentTokens(messages as ModelMessage[] as never, prices);
      const { historyTokens, currentInputTokens } = reports[0]!.budget;
      expect(historyTokens + currentInputTokens).toBeGreaterThanOrEqual(sent);
      // And far below the raw 200-hour forecast, which the model never sees.
      expect(historyTokens + currentInputTokens).toBeLessThan(sent + 200);
    });
  },
);
