import { ToolLoopAgent, isStepCount, type LanguageModel } from 'ai';
import { createChatHandler } from 'agent-history/ai-sdk';
import { createEstimatingReportSource } from './context-report';
import { createScriptedModel } from './scripted-model';
import { tenantHistory } from './tenant';
import { metadataSchema, tools, type ChatMessage } from './tools';

export const INSTRUCTIONS = 'You are a concise assistant. Use the weather tool for weather questions.';

/** A real model when OPENAI_API_KEY is set, else the deterministic scripted one. */
async function chatModel(): Promise<{ model: LanguageModel; provider: string; modelId: string }> {
  if (process.env.OPENAI_API_KEY) {
    const { openai } = await import('@ai-sdk/openai');
    const modelId = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
    return { model: openai(modelId), provider: 'openai', modelId };
  }
  return { model: createScriptedModel(), provider: 'scripted', modelId: 'scripted-v1' };
}

const selected = await chatModel();

/** The context inspector's data (a stub until the library's context manager reports per step). */
export const contextReports = createEstimatingReportSource({ instructions: INSTRUCTIONS, toolSet: tools });

/** The chat route: persistence, stop, regenerate and edit, all from agent-history. */
export const chat = createChatHandler<ChatMessage, typeof tools>({
  getHistory: () => tenantHistory(),
  tools,
  metadataSchema,
  model: {
    agent: ({ prepareStep }) => new ToolLoopAgent({ model: selected.model, instructions: INSTRUCTIONS, tools, prepareStep, stopWhen: isStepCount(5) }),
  },
  contextManager: ({ threadId, runId }) => contextReports.contextManagerFor({ threadId, runId }),
  run: { provider: selected.provider, model: selected.modelId },
});

/** How many messages a page of history holds. */
export const PAGE_SIZE = Number(process.env.CHAT_PAGE_SIZE ?? 20);
