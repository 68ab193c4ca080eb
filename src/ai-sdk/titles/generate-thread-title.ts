import { generateText, type LanguageModel } from 'ai';

/** What a title is written from: the text of the first exchange. */
export interface ThreadTitleInput {
  /** The text of the first user message. */
  userText: string;
  /** The text of the first answer ('' if it has none). */
  answerText: string;
}

/**
 * How a chat's title is written after its first exchange: a model (`generateText` with a short prompt), or a
 * function (a deterministic one such as `offlineThreadTitle` for tests and an offline demo).
 */
export type ChatTitleGenerator = LanguageModel | ((input: ThreadTitleInput) => string | Promise<string>);

const MAX_TITLE = 80;

/** The title a generator writes, one line of at most 80 characters without quotes; null when it is empty. */
export async function generateThreadTitle(
  generator: ChatTitleGenerator,
  input: ThreadTitleInput,
  abortSignal?: AbortSignal,
): Promise<string | null> {
  const raw =
    typeof generator === 'function'
      ? await generator(input)
      : (
          await generateText({
            model: generator,
            instructions:
              'Write a short title (at most 6 words) for the conversation below. Answer with the title only: ' +
              'no quotes, no punctuation at the end.',
            prompt: `User: ${input.userText.slice(0, 2000)}\n\nAssistant: ${input.answerText.slice(0, 2000)}`,
            maxOutputTokens: 30,
            temperature: 0,
            maxRetries: 1,
            abortSignal,
            // The application's AI SDK telemetry sees the call, never the conversation it titles.
            telemetry: { functionId: 'agent-history.title', recordInputs: false, recordOutputs: false },
          })
        ).text;
  const line = raw
    .split('\n')
    .map((text) => text.trim().replace(/^["'“”#*\s]+|["'“”*\s]+$/g, ''))
    .find((text) => text.length > 0);
  if (!line) return null;
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1).trimEnd()}…` : line;
}
