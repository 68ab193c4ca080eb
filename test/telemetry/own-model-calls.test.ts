import { OpenTelemetry } from '@ai-sdk/otel';
import { registerTelemetry } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGenerateTextSummarizer } from '../../src/ai-sdk/index.js';
import { generateThreadTitle } from '../../src/ai-sdk/titles/generate-thread-title.js';
import { stringsOf, useInMemoryTracing } from '../support/in-memory-tracing.js';

const tracing = useInMemoryTracing();
const ASKED = 'the vault code is OSPREY-5150';
const WRITTEN = 'Summary: the vault code is KESTREL-8080';

/** A model that answers every call with `text`, and keeps the prompts it was sent. */
function answering(text: string) {
  return new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 6, text: 6, reasoning: undefined },
      },
      warnings: [],
    }),
  });
}

// The application registers the AI SDK's OpenTelemetry integration for every call, recording prompts and outputs
// by default; the package's own calls (a summary, a title) opt out of both.
describe("the package's own model calls under the application's AI SDK telemetry", () => {
  beforeAll(() => registerTelemetry(new OpenTelemetry()));
  afterAll(
    () => void (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[] }).AI_SDK_TELEMETRY_INTEGRATIONS?.splice(0),
  );

  it('should trace a summary call by its function id, without the transcript or the summary', async () => {
    const model = answering(WRITTEN);
    const summary = await createGenerateTextSummarizer({ model }).summarize({
      previousSummary: null,
      transcript: `User: ${ASKED}`,
      messages: [{ role: 'user', content: ASKED }],
      fromSequence: 1,
      throughSequence: 1,
      maxOutputTokens: 100,
      abortSignal: new AbortController().signal,
    });
    expect(summary).toBe(WRITTEN);
    expect(JSON.stringify(model.doGenerateCalls[0]!.prompt)).toContain('OSPREY-5150'); // the model was sent it
    const strings = tracing.spans().flatMap(stringsOf);
    expect(strings).toContain('agent-history.summarize');
    expect(strings.filter((text) => /OSPREY|KESTREL|vault/.test(text))).toEqual([]);
  });

  it('should trace a title call by its function id, without the conversation or the title', async () => {
    const model = answering('KESTREL vault plans');
    expect(await generateThreadTitle(model, { userText: ASKED, answerText: WRITTEN })).toBe('KESTREL vault plans');
    expect(JSON.stringify(model.doGenerateCalls[0]!.prompt)).toContain('OSPREY-5150');
    const strings = tracing.spans().flatMap(stringsOf);
    expect(strings).toContain('agent-history.title');
    expect(strings.filter((text) => /OSPREY|KESTREL|vault/.test(text))).toEqual([]);
  });
});
