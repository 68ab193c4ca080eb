// What W8 drives on each peer, and the answer every peer streams the same way: the AI SDK's `streamText` with W8's
// model and tools into a UI message stream read to its end, as the chatbot template's route does. The peers differ
// only in what they read before the model and write around it.
import { randomUUID } from 'node:crypto';
import {
  createUIMessageStream,
  createUIMessageStreamResponse,
  isStepCount,
  streamText,
  type ModelMessage,
  type UIMessage,
} from 'ai';
import { W8_INSTRUCTIONS, W8_STEPS, W8_TOOLS, w8Model } from './w8-chat-model.js';

/** One store as W8 drives it. */
export interface W8Peer {
  name: string;
  /** A new chat of `size` messages (the newest an assistant answer); resolves with its id. */
  seed(size: number): Promise<string>;
  /** One exchange: the user's message in, the answer streamed to its end and stored. */
  turn(chatId: string): Promise<void>;
  close(): Promise<void>;
}

/** Streams W8's answer to `messages`; `onEnd` stores it (awaited before this resolves). */
export async function streamAnswer(
  messages: ModelMessage[],
  onEnd: (responseMessage: UIMessage) => Promise<unknown>,
): Promise<void> {
  let stored: Promise<unknown> = Promise.reject(new Error('the stream ended without its end callback'));
  stored.catch(() => {});
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      const result = streamText({
        model: w8Model(randomUUID()),
        system: W8_INSTRUCTIONS,
        messages,
        tools: W8_TOOLS,
        stopWhen: isStepCount(5),
      });
      writer.merge(result.toUIMessageStream({ sendReasoning: true }));
    },
    generateId: randomUUID,
    onEnd: ({ responseMessage }) => {
      const steps = responseMessage.parts.filter((part) => part.type === 'step-start').length;
      stored = steps === W8_STEPS ? onEnd(responseMessage) : Promise.reject(new Error(`the answer has ${steps} steps`));
    },
  });
  await createUIMessageStreamResponse({ stream }).text();
  await stored;
}
