// Prompt caching in a chat: a new turn over a thread of earlier turns with tool traffic. When the request goes over
// the budget, the compaction goes down to the low-water mark even where pruning the older turns' tool traffic alone
// would have made it fit, and a newest turn that alone leaves no room under the mark has its older rounds shrunk
// (never the newest round): either way the next steps append to the request instead of cutting it again at every
// step. The behaviour before (cut just to the budget while the newest turn fits it) is what the checks fail on.
import { generateText, isStepCount, tool } from 'ai';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import { defaultContextPolicy, resolveModelProfile } from '../../../src/context/index.js';
import { toolOutputPreviewMarker } from '../../../src/context/stages/preview-tool-output.js';
import { countSentTokens } from '../../support/count-sent-tokens.js';
import { assistant, stepStart, storeOf, text, tokenCounter, toolResult, user } from '../../context/fixtures.js';
import { answerStep, pageCallStep } from './page-steps.js';

const budget = 8000;
const instructions = 'You read reports.';
const prices = resolveModelProfile({ modelId: 'gpt-4o' });
const target = budget * defaultContextPolicy.summary.targetRatio;
const row = (index: number) => `row ${index}: status ok, lorem ipsum dolor sit amet`;
const report = (rows: number, seed: number) =>
  Array.from({ length: rows }, (_unused, index) => row(index * 7 + seed)).join('\n');
const read = tool({
  description: 'Read one page of the report',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => outputs[page]!,
});
let outputs: string[] = [];
const callStep = (page: number) => pageCallStep('read', page);

/** Earlier turns, each a question, one tool call with an output of `rows` rows, and an answer of `answerRows`. */
function earlierTurns(turns: number, rows: number, answerRows = 1) {
  return Array.from({ length: turns }, (_unused, turn) => [
    user(`u${turn}`, `Question ${turn}: what does page ${turn} say?`),
    assistant(
      `a${turn}`,
      stepStart,
      toolResult('read', `old-${turn}`, { page: turn }, report(rows, turn)),
      stepStart,
      text(`Page ${turn} says:\n${report(answerRows, 500 + turn)}`),
    ),
  ]).flat();
}

/** Every prompt of a new turn that reads `pages` (their outputs given), over the earlier turns. */
async function promptsOfTurn(history: ReturnType<typeof earlierTurns>, pages: string[]) {
  outputs = pages;
  const context = createContextManager({
    store: storeOf([...history, user('now', 'Read the new pages.')]),
    model: 'gpt-4o',
    instructions,
    maxInputTokens: budget,
    tools: { read },
    tokenCounter,
  });
  const model = new MockLanguageModelV4({
    doGenerate: [...pages.map((_page, index) => callStep(index)), answerStep],
  });
  await generateText({
    model,
    instructions,
    tools: { read },
    messages: await context.initialMessages(),
    prepareStep: context.prepareStep,
    stopWhen: isStepCount(pages.length + 1),
  });
  return model.doGenerateCalls.map((call) => call.prompt);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const appends = (previous: LanguageModelV4Prompt, next: LanguageModelV4Prompt) =>
  previous.length <= next.length && previous.every((message, index) => same(message, next[index]));
const cutAt = (prompts: LanguageModelV4Prompt[]) =>
  prompts.flatMap((prompt, index) => (index > 0 && !appends(prompts[index - 1]!, prompt) ? [index] : []));
/** The output of the newest tool call in a prompt, as sent. */
function newestOutput(prompt: LanguageModelV4Prompt): string | undefined {
  const results = prompt.flatMap((message) =>
    message.role === 'tool' ? message.content.filter((part) => part.type === 'tool-result') : [],
  );
  const last = results.at(-1);
  return last ? JSON.stringify(last.output) : undefined;
}

describe('createContextManager and prompt caching in a chat', () => {
  it('should cut older turns down to the low-water mark even when pruning their tool traffic would fit', async () => {
    // Six earlier turns with long answers and some tool output: when the new turn's pages push the request over
    // the budget, pruning the older tool outputs alone would bring it back under the budget but not under the mark,
    // and the next pages would push it over again a few steps later.
    const pages = Array.from({ length: 10 }, (_unused, page) => report(26, 1000 + page));
    const prompts = await promptsOfTurn(earlierTurns(6, 25, 70), pages);
    expect(prompts).toHaveLength(pages.length + 1);
    for (const prompt of prompts) expect(countSentTokens(prompt, prices)).toBeLessThanOrEqual(budget);
    const cuts = cutAt(prompts);
    // One cut, down to the mark: every later page appends.
    expect(cuts).toHaveLength(1);
    expect(countSentTokens(prompts[cuts[0]!]!, prices)).toBeLessThanOrEqual(target);
  });

  it('should shrink the older rounds of a newest turn that leaves no room under the mark, never the newest', async () => {
    // Two earlier turns; the new turn reads two large pages, then small ones: the newest turn alone is over the
    // mark but within the budget, so cutting the earlier turns leaves no room for the next step.
    const pages = [report(300, 1), report(260, 2), ...Array.from({ length: 10 }, (_unused, page) => report(8, page))];
    const prompts = await promptsOfTurn(earlierTurns(6, 40), pages);
    expect(prompts).toHaveLength(pages.length + 1);
    for (const [index, prompt] of prompts.entries()) {
      expect(countSentTokens(prompt, prices)).toBeLessThanOrEqual(budget);
      // The result the model just asked for is sent whole.
      if (index > 0) expect(newestOutput(prompt)).not.toContain(toolOutputPreviewMarker);
    }
    const cuts = cutAt(prompts);
    // Cut once the large pages are in, down to the mark; then the small pages append.
    expect(cuts).toHaveLength(1);
    expect(countSentTokens(prompts[cuts[0]!]!, prices)).toBeLessThanOrEqual(target);
    const last = prompts.at(-1)!;
    expect(JSON.stringify(last)).toContain(toolOutputPreviewMarker);
  });
});
