// Prompt caching through the AI SDK: in a long tool loop the model is sent, step after step, the previous request
// unchanged with the new step appended, until the request would exceed the budget; then it is cut once, down to the
// low-water mark (`summary.targetRatio` of the budget), and a tool output shortened to a preview is the same preview
// every time it is sent. The previous defaults (previews cut to the room and grown back, the newest turn cut just to
// the budget) re-cut the request at almost every step: that policy is run too, so the checks can be seen to fail.
import { generateText, isStepCount, tool } from 'ai';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import { defaultContextPolicy, resolveModelProfile, type ContextPolicyInput } from '../../../src/context/index.js';
import { toolOutputPreviewMarker } from '../../../src/context/stages/preview-tool-output.js';
import { InvalidArgumentError } from '../../../src/errors/index.js';
import { countSentTokens } from '../../support/count-sent-tokens.js';
import { storeOf, tokenCounter, user } from '../../context/fixtures.js';
import { answerStep, pageCallStep } from './page-steps.js';

const budget = 4000;
const steps = 40;
const instructions = 'You read reports.';
const prices = resolveModelProfile({ modelId: 'gpt-4o' });
const row = (index: number) => `row ${index}: status ok, lorem ipsum dolor sit amet`;
// Most outputs 60-600 tokens; every ninth one larger than the whole budget.
const outputOf = (step: number) =>
  Array.from({ length: step % 9 === 4 ? 700 : 5 + ((step * 37) % 50) }, (_unused, index) => row(index)).join('\n');
const search = tool({
  description: 'Read one page of the report',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => outputOf(page),
});
const callStep = (page: number) => pageCallStep('search', page);

/** Every prompt the model was sent in a tool loop of `steps` calls, with the policy given. */
async function promptsOfToolLoop(policy: ContextPolicyInput = {}): Promise<LanguageModelV4Prompt[]> {
  const context = createContextManager({
    store: storeOf([user('u1', 'Read every page of the report.')]),
    model: 'gpt-4o',
    instructions,
    maxInputTokens: budget,
    tools: { search },
    policy,
    tokenCounter,
  });
  const model = new MockLanguageModelV4({
    doGenerate: [...Array.from({ length: steps }, (_unused, page) => callStep(page)), answerStep],
  });
  await generateText({
    model,
    instructions,
    tools: { search },
    messages: await context.initialMessages(),
    prepareStep: context.prepareStep,
    stopWhen: isStepCount(steps + 1),
  });
  return model.doGenerateCalls.map((call) => call.prompt);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** Whether `next` starts with every message of `previous`, byte for byte. */
const appends = (previous: LanguageModelV4Prompt, next: LanguageModelV4Prompt) =>
  previous.length <= next.length && previous.every((message, index) => same(message, next[index]));
/** The forms a tool output took in the prompts, per call id (in the order first seen). */
function outputForms(prompts: LanguageModelV4Prompt[]): Map<string, string[]> {
  const forms = new Map<string, string[]>();
  for (const prompt of prompts)
    for (const message of prompt)
      if (message.role === 'tool')
        for (const part of message.content)
          if (part.type === 'tool-result') {
            const value = JSON.stringify(part.output);
            const seen = forms.get(part.toolCallId) ?? [];
            if (!seen.includes(value)) forms.set(part.toolCallId, [...seen, value]);
          }
  return forms;
}
const cuts = (prompts: LanguageModelV4Prompt[]) =>
  prompts.slice(1).filter((prompt, index) => !appends(prompts[index]!, prompt)).length;

describe('createContextManager and prompt caching', () => {
  it('should send the previous request unchanged plus the new step while it fits, and cut to the low-water mark', async () => {
    const prompts = await promptsOfToolLoop();
    expect(prompts).toHaveLength(steps + 1);
    for (const [index, prompt] of prompts.entries()) {
      expect(countSentTokens(prompt, prices)).toBeLessThanOrEqual(budget);
      if (index === 0) continue;
      const previous = prompts[index - 1]!;
      // At least what the model would be sent unmanaged: the previous request and the new step's whole output.
      const grown = countSentTokens(previous, prices) + tokenCounter.count(outputOf(index - 1));
      if (appends(previous, prompt)) continue;
      // A cut happens only at the high-water mark, and leaves room for several steps.
      expect(grown).toBeGreaterThan(budget * 0.9);
      expect(countSentTokens(prompt, prices)).toBeLessThanOrEqual(
        budget * defaultContextPolicy.summary.targetRatio + 200,
      );
    }
    expect(cuts(prompts)).toBeLessThanOrEqual(steps / 4);
  });

  it('should send a shortened tool output as the same fixed-size preview every time', async () => {
    const forms = outputForms(await promptsOfToolLoop());
    const previewed = [...forms.entries()].filter(([, seen]) =>
      seen.some((form) => form.includes(toolOutputPreviewMarker)),
    );
    expect(previewed.length).toBeGreaterThanOrEqual(3);
    for (const [id, seen] of previewed) {
      // Sent whole (at most once, before it was cut), then always the one preview: never shrunk and grown back.
      expect({ id, previews: seen.filter((form) => form.includes(toolOutputPreviewMarker)).length }).toEqual({
        id,
        previews: 1,
      });
      expect(seen.at(-1)).toContain(toolOutputPreviewMarker);
    }
  });

  it('should re-cut the request at most steps with previews fitted to the room and no low-water mark', async () => {
    const prompts = await promptsOfToolLoop({ summary: { targetRatio: 1 }, toolOutputPreview: { sizing: 'fit' } });
    expect(cuts(prompts)).toBeGreaterThan(steps / 2);
    const forms = outputForms(prompts);
    expect([...forms.values()].some((seen) => seen.length > 2)).toBe(true);
  });

  it('should refuse a preview sizing or a reasoning mode it does not know, naming it', () => {
    for (const [policy, argument, value] of [
      [{ toolOutputPreview: { sizing: 'grow' } }, 'policy.toolOutputPreview.sizing', 'grow'],
      [{ toolOutputPreview: { sizing: true } }, 'policy.toolOutputPreview.sizing', true],
      [{ prune: { reasoning: 'when-over' } }, 'policy.prune.reasoning', 'when-over'],
    ] as const) {
      const create = () =>
        createContextManager({
          store: storeOf([user('u1', 'Hi')]),
          model: 'gpt-4o',
          tokenCounter,
          policy: policy as never,
        });
      expect(create).toThrowError(InvalidArgumentError);
      expect(create).toThrowError(expect.objectContaining({ argument, value }));
    }
  });
});
