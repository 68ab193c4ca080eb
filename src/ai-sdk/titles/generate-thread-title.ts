import { generateText, type LanguageModel } from 'ai';
import type { TenantHistory } from '../../store/tenant-history.js';

/** What a title is written from: the text of the first exchange. */
export interface ThreadTitleInput {
  /** The text of the first user message. */
  userText: string;
  /** The text of the first answer ('' if it has none). */
  answerText: string;
}

/**
 * How a chat's title is written after its first exchange: a model (`generateText` with a short prompt), or a
 * function (a deterministic one such as {@link offlineThreadTitle} for tests and an offline demo).
 */
export type ChatTitleGenerator = LanguageModel | ((input: ThreadTitleInput) => string | Promise<string>);

const MAX_TITLE = 80;

/** The text parts of a message, joined by spaces. */
export function messageText(message: { parts: ReadonlyArray<{ type: string; text?: unknown }> }): string {
  return message.parts
    .flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
    .join(' ')
    .trim();
}

/** A deterministic title: the first words of the user's message (at most 6 words, 80 characters). */
export function offlineThreadTitle({ userText }: ThreadTitleInput): string {
  const words = userText.replace(/\s+/g, ' ').trim().split(' ').slice(0, 6).join(' ');
  return words.replace(/[.?!,;:]+$/, '') || 'New chat';
}

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
          })
        ).text;
  const line = raw
    .split('\n')
    .map((text) => text.trim().replace(/^["'“”#*\s]+|["'“”*\s]+$/g, ''))
    .find((text) => text.length > 0);
  if (!line) return null;
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1).trimEnd()}…` : line;
}

/**
 * Writes the title of an untitled thread after its first exchange. A thread given a title meanwhile (by the user,
 * or by a racing request) keeps it. Returns the title written, or null.
 */
export async function titleThread(
  history: TenantHistory,
  threadId: string,
  generator: ChatTitleGenerator,
  input: ThreadTitleInput,
): Promise<string | null> {
  const title = await generateThreadTitle(generator, input);
  if (title === null) return null;
  const thread = await history.getThread(threadId);
  if (thread.title !== null) return null;
  await history.renameThread(threadId, { title });
  return title;
}
