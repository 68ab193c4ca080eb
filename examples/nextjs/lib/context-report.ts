import type { Instructions, LanguageModel } from 'ai';
import type { TenantHistory } from 'agent-history';
import {
  createContextManager,
  createGenerateTextSummarizer,
  createOfflineSummarizer,
  type ChatContextManager,
} from 'agent-history/ai-sdk';
import type { tools } from './tools';

export interface ContextManagerFactoryOptions {
  instructions: Instructions;
  toolSet: typeof tools;
  /** The model id whose profile sets the budget (`gpt-4o-mini`). */
  modelId: string;
  /** The model, to write summaries with; the offline summarizer otherwise. */
  summaryModel?: LanguageModel;
  /** Overrides the profile's window (a small one makes a short chat show pruning, a summary and a snapshot). */
  contextWindow?: number;
  maxOutputTokens?: number;
  /** Tokens kept for a summary (the library's default, 2,000, is more than a small demo window holds). */
  summaryReserveTokens?: number;
}

/**
 * The library's context manager, one per turn. What it did is stored (the run, and a snapshot whenever it compacted
 * the context): the inspector reads those (lib/inspector.ts), nothing is kept in process memory.
 */
export function createContextManagerFactory({
  instructions,
  toolSet,
  modelId,
  summaryModel,
  contextWindow,
  maxOutputTokens = 500,
  summaryReserveTokens,
}: ContextManagerFactoryOptions) {
  const summarizer = summaryModel ? createGenerateTextSummarizer({ model: summaryModel }) : createOfflineSummarizer();
  return ({ history, threadId }: { history: TenantHistory; threadId: string }): ChatContextManager<typeof tools> =>
    createContextManager({
      store: history.contextStore(threadId),
      model: modelId,
      modelProfile: contextWindow === undefined ? undefined : { contextWindow, maxOutputTokens },
      maxOutputTokens,
      tools: toolSet,
      instructions,
      summarizer,
      policy: {
        ...(summaryReserveTokens === undefined ? {} : { summary: { reserveTokens: summaryReserveTokens } }),
        // What the signed-in user said in their other chats, found for the newest question (full-text): it reaches
        // the model in the room the history leaves. Another user's chats are never searched (row-level security).
        memory: { recall: { mode: 'auto', limit: 2, maxTokens: 200 } },
      },
    });
}
