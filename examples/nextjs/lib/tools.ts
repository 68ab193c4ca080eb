import { tool, type InferUITools, type UIMessage } from 'ai';
import { z } from 'zod';

/** A deterministic weather tool: the temperature is derived from the city's name. */
export const weather = tool({
  description: 'Get the current temperature in a city',
  inputSchema: z.object({ city: z.string().min(1) }),
  outputSchema: z.object({ city: z.string(), tempC: z.number() }),
  execute: async ({ city }) => ({
    city,
    tempC: 10 + ([...city].reduce((sum, char) => sum + char.charCodeAt(0), 0) % 20),
  }),
});

/** A tool the user must approve first (`needsApproval`): the chat shows Approve / Deny on its call. */
export const sendReminder = tool({
  description: 'Set a reminder for the user; the user approves it first',
  inputSchema: z.object({ text: z.string().min(1) }),
  outputSchema: z.object({ text: z.string(), set: z.boolean() }),
  needsApproval: true,
  execute: async ({ text }) => ({ text, set: true }),
});

export const tools = { weather, sendReminder };

/** What the chat stores and streams in `message.metadata`. */
export const metadataSchema = z
  .object({
    usage: z
      .object({
        inputTokens: z.number(),
        outputTokens: z.number(),
        totalTokens: z.number(),
        reasoningTokens: z.number(),
        cachedInputTokens: z.number(),
      })
      .partial()
      .optional(),
  })
  .optional();

/** The example's message type: metadata, no data parts, and its tools. */
export type ChatMessage = UIMessage<z.infer<typeof metadataSchema>, never, InferUITools<typeof tools>>;
