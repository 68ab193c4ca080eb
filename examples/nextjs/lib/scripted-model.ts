import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

type Prompt = Array<{ role: string; content: unknown }>;
type StreamPart = Parameters<typeof simulateReadableStream>[0]['chunks'][number];

const STORY =
  'Once upon a time a small agent kept a careful log of every conversation it had. Each message found its place in ' +
  'the thread, one sequence after another, and nothing the user saw was ever lost. When the user pressed stop, the ' +
  'agent kept the words it had already written. When the user asked again, the old answer stepped aside instead of ' +
  'disappearing. And when the conversation grew long, the agent chose carefully what to remember, turn by turn, ' +
  'until the very last word of this deliberately long and slow story.';

// An answer in Markdown, with markup that must stay text: the example renders a whitelist, never raw HTML.
const MARKDOWN = [
  '### What the store keeps',
  '',
  'Every message is **persisted as it streams**, in *order*, with `sequence` numbers:',
  '',
  '- a stopped answer is kept',
  '- a regenerated one is [excluded](https://ai-sdk.dev), not deleted',
  '',
  '```',
  'await history.appendMessage(threadId, message);',
  '```',
  '',
  'Markup is shown as text: <script>window.__injected = "script"</script> <img src="x" onerror="window.__injected = \'img\'"> [a link](javascript:alert(1)).',
].join('\n');

let answers = 0;

function lastUserText(prompt: Prompt): string {
  const user = [...prompt].reverse().find((message) => message.role === 'user');
  const content = user?.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content.map((part: { type: string; text?: string }) => (part.type === 'text' ? part.text : '')).join(' ')
    : '';
}

/** The text of the first message recalled from another chat (the context manager's recall), without its header. */
function recalledText(prompt: Prompt): string | undefined {
  for (const message of prompt) {
    if (message.role !== 'user' || !Array.isArray(message.content)) continue;
    const text = (message.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
    if (text.startsWith('[Recalled from an earlier conversation')) return text.split('\n\n').slice(1).join(' ').trim();
  }
  return undefined;
}

const usage = (prompt: Prompt, output: number) => {
  const input = Math.ceil(JSON.stringify(prompt).length / 4);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
};

function textChunks(text: string, prompt: Prompt): StreamPart[] {
  const words = text.split(/(?<= )/);
  return [
    { type: 'text-start', id: 'text' },
    ...words.map((delta) => ({ type: 'text-delta' as const, id: 'text', delta })),
    { type: 'text-end', id: 'text' },
    { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usage(prompt, words.length) },
  ] as StreamPart[];
}

/**
 * A deterministic local model for the example and its end-to-end test (used when no OPENAI_API_KEY is set):
 * - "weather in <city>": calls the weather tool, then reports its result (two steps);
 * - "remind me to <text>": calls sendReminder, which needs the user's approval, then says what happened;
 * - "markdown": an answer in Markdown, with a `<script>` and an `<img onerror>` that must be shown as text;
 * - "story" or "long": a long answer streamed slowly, word by word, so that it can be stopped midway;
 * - "what do you remember": quotes the first message recalled from the user's other chats, if the prompt has one;
 * - anything else: a short numbered answer that quotes the question (so a regenerated answer differs).
 */
export function createScriptedModel({
  delayMs = Number(process.env.SCRIPTED_MODEL_DELAY_MS ?? 20),
  storyDelayMs = Number(process.env.SCRIPTED_STORY_DELAY_MS ?? 120),
} = {}) {
  return new MockLanguageModelV4({
    provider: 'scripted',
    modelId: 'scripted-v1',
    doStream: async ({ prompt }) => {
      const messages = prompt as unknown as Prompt;
      const text = lastUserText(messages);
      const last = messages.at(-1);
      let chunks: StreamPart[];
      let chunkDelayInMs = delayMs;
      const city = /weather in ([\p{L} ]+)/iu.exec(text)?.[1]?.trim();
      const reminder = /remind me to (.+)/i.exec(text)?.[1]?.trim();
      if (last?.role === 'tool' && JSON.stringify(last.content).includes('sendReminder')) {
        const denied = JSON.stringify(last.content).includes('execution-denied');
        const answer = denied ? 'OK, I did not set the reminder.' : `Reminder set: ${reminder ?? 'done'}.`;
        chunks = textChunks(answer, messages);
      } else if (last?.role === 'tool') {
        const result = JSON.stringify(last.content).match(/"tempC":(-?\d+)/)?.[1];
        chunks = textChunks(`The weather tool says it is ${result ?? 'unknown'}°C there.`, messages);
      } else if (city) {
        chunks = [
          { type: 'tool-input-start', id: `call-${answers}`, toolName: 'weather' },
          { type: 'tool-input-delta', id: `call-${answers}`, delta: JSON.stringify({ city }) },
          { type: 'tool-input-end', id: `call-${answers}` },
          { type: 'tool-call', toolCallId: `call-${answers++}`, toolName: 'weather', input: JSON.stringify({ city }) },
          { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(messages, 12) },
        ] as StreamPart[];
      } else if (reminder) {
        const id = `call-${answers++}`;
        chunks = [
          { type: 'tool-call', toolCallId: id, toolName: 'sendReminder', input: JSON.stringify({ text: reminder }) },
          { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(messages, 8) },
        ] as StreamPart[];
      } else if (/markdown/i.test(text)) {
        chunks = textChunks(MARKDOWN, messages);
      } else if (/what do you remember/i.test(text)) {
        const recalled = recalledText(messages);
        const answer = recalled ? `From an earlier chat: “${recalled}”.` : 'I remember nothing from your other chats.';
        chunks = textChunks(answer, messages);
      } else if (/story|long/i.test(text)) {
        chunks = textChunks(STORY, messages);
        chunkDelayInMs = storyDelayMs;
      } else {
        chunks = textChunks(`Answer #${++answers} to “${text}”: noted and stored in the thread.`, messages);
      }
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs, initialDelayInMs: null }) as never };
    },
  });
}
