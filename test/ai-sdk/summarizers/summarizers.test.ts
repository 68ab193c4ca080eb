import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createGenerateTextSummarizer } from '../../../src/ai-sdk/summarizers/generate-text-summarizer.js';
import { createOfflineSummarizer } from '../../../src/ai-sdk/summarizers/offline-summarizer.js';
import { buildSummaryPrompt, renderSummaryTranscript } from '../../../src/context/stages/summary-prompt.js';
import type { ContextSummarizerInput } from '../../../src/context/index.js';

const foldedMessages: ContextSummarizerInput['messages'] = [
  { role: 'user', content: [{ type: 'text', text: 'Book a table for four in Rome on Friday.' }] },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'search first' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'searchRestaurants', input: { city: 'Rome', seats: 4 } },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'searchRestaurants',
        output: { type: 'json', value: [{ name: 'Da Enzo', free: true }] },
      },
    ],
  },
  {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'book', input: { name: 'Da Enzo' } }],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c2',
        toolName: 'book',
        output: { type: 'error-text', value: 'payment required' },
      },
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'Da Enzo is free on Friday; booking needs a card.' }] },
];
const input = (previousSummary: string | null): ContextSummarizerInput => ({
  previousSummary,
  transcript: renderSummaryTranscript({ messages: foldedMessages }),
  messages: foldedMessages,
  fromSequence: 1,
  throughSequence: 4,
  maxOutputTokens: 500,
  abortSignal: new AbortController().signal,
});

describe('renderSummaryTranscript', () => {
  it('should render text, tool calls and results, leave out reasoning, and cut long tool text', () => {
    expect(renderSummaryTranscript({ messages: foldedMessages, toolOutputCharacters: 20 })).toMatchInlineSnapshot(`
      "[user] Book a table for four in Rome on Friday.
      [tool call searchRestaurants] {"city":"Rome","seat […5 more characters]
      [tool result searchRestaurants] [{"name":"Da Enzo"," […12 more characters]
      [tool call book] {"name":"Da Enzo"}
      [tool result book] payment required
      [assistant] Da Enzo is free on Friday; booking needs a card."
    `);
  });
});

describe('buildSummaryPrompt', () => {
  it('should ask for the five sections and give the previous summary and the messages', () => {
    const { instructions, prompt } = buildSummaryPrompt(input('## Goals\n- Visit Rome'));
    expect(instructions).toMatchInlineSnapshot(`
      "You maintain the running summary of a conversation between a user and an AI assistant that uses tools.
      The summary replaces the messages it covers, so it must keep everything needed to continue the work:
      names, numbers, identifiers, file paths, URLs, decisions and their reasons, what was done and what is still open.

      Write the summary in exactly these Markdown sections, in this order:
      ## Goals
      ## Decisions
      ## Facts
      ## Completed actions
      ## Open tasks

      Rules:
      - Merge the previous summary and the new messages into one summary. Do not nest, quote or summarize the previous summary as a whole.
      - Keep every fact of the previous summary unless the new messages change it.
      - List completed tool actions with their outcome, so that they are not repeated.
      - Write "None." under a section with nothing to say.
      - Do not invent anything, do not address the user, and write nothing outside the sections.
      - Stay under 500 tokens."
    `);
    expect(prompt).toMatchInlineSnapshot(`
      "<previous-summary>
      ## Goals
      - Visit Rome
      </previous-summary>

      <messages from-sequence="1" through-sequence="4">
      [user] Book a table for four in Rome on Friday.
      [tool call searchRestaurants] {"city":"Rome","seats":4}
      [tool result searchRestaurants] [{"name":"Da Enzo","free":true}]
      [tool call book] {"name":"Da Enzo"}
      [tool result book] payment required
      [assistant] Da Enzo is free on Friday; booking needs a card.
      </messages>

      Write the updated summary now."
    `);
  });
});

describe('createOfflineSummarizer', () => {
  it('should extract the sections deterministically', async () => {
    expect(await createOfflineSummarizer().summarize(input(null))).toMatchInlineSnapshot(`
      "## Goals
      - Book a table for four in Rome on Friday.

      ## Decisions
      - Da Enzo is free on Friday; booking needs a card.

      ## Facts
      - searchRestaurants: [{"name":"Da Enzo","free":true}]

      ## Completed actions
      - searchRestaurants({"city":"Rome","seats":4})
      - book({"name":"Da Enzo"})

      ## Open tasks
      - book failed: payment required"
    `);
  });

  it('should merge the previous summary without nesting it, keeping the newest items', async () => {
    const summarizer = createOfflineSummarizer({ itemsPerSection: 2 });
    const first = await summarizer.summarize(input(null));
    const second = await summarizer.summarize({
      ...input(`${first}\n`),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Also find a hotel near the Pantheon.' }] }],
    });
    expect(second).toMatchInlineSnapshot(`
      "## Goals
      - Book a table for four in Rome on Friday.
      - Also find a hotel near the Pantheon.

      ## Decisions
      - Da Enzo is free on Friday; booking needs a card.

      ## Facts
      - searchRestaurants: [{"name":"Da Enzo","free":true}]

      ## Completed actions
      - searchRestaurants({"city":"Rome","seats":4})
      - book({"name":"Da Enzo"})

      ## Open tasks
      - book failed: payment required
      - Answer: Also find a hotel near the Pantheon."
    `);
    expect(second.match(/## Goals/g)).toHaveLength(1);
  });
});

describe('createGenerateTextSummarizer', () => {
  it('should call the model with the summary prompt and return its text', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: 'text', text: '## Goals\n- Book Da Enzo' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        warnings: [],
      },
    });
    const summarizer = createGenerateTextSummarizer({ model });
    expect(summarizer.id).toBe('mock-provider:mock-model-id');
    expect(await summarizer.summarize(input(null))).toBe('## Goals\n- Book Da Enzo');
    const { instructions, prompt } = buildSummaryPrompt(input(null));
    expect(model.doGenerateCalls[0]!.prompt).toEqual([
      { role: 'system', content: instructions },
      { role: 'user', content: [{ type: 'text', text: prompt }] },
    ]);
    expect(model.doGenerateCalls[0]).toMatchObject({ maxOutputTokens: 500, temperature: 0 });
  });

  it('should let an aborted call fail', async () => {
    const controller = new AbortController();
    controller.abort(new Error('timed out'));
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new Error('unreachable');
      },
    });
    await expect(
      createGenerateTextSummarizer({ model, maxRetries: 0 }).summarize({
        ...input(null),
        abortSignal: controller.signal,
      }),
    ).rejects.toThrow();
  });
});
