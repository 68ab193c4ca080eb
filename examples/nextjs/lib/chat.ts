import { ToolLoopAgent, isStepCount, type LanguageModel } from 'ai';
import { NotFoundError } from 'agent-history';
import { createChatHandler, offlineThreadTitle } from 'agent-history/ai-sdk';
import { createContextManagerFactory } from './context-report';
import { errorResponse } from './errors';
import { createScriptedModel } from './scripted-model';
import { currentUserId, isOtherUsersThread, tenantHistory } from './tenant';
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

/** The library's context manager for every turn (what it does is stored, and read back by the inspector). */
const contextManagerFor = createContextManagerFactory({
  instructions: INSTRUCTIONS,
  toolSet: tools,
  modelId: selected.provider === 'openai' ? selected.modelId : 'gpt-4o-mini',
  summaryModel: selected.provider === 'openai' ? selected.model : undefined,
  // The real window with a real model. With the scripted model a small one (DEMO_CONTEXT_WINDOW): 900 tokens leave
  // about 200 for the history after the instructions, the tools, the 500-token output reserve and the margin, so a
  // normal session is summarized from its seventh or eighth exchange on (an exchange is about 33 tokens), and the
  // inspector shows the snapshot. The summary's reserve is cut to fit such a window.
  contextWindow: selected.provider === 'openai' ? undefined : Number(process.env.DEMO_CONTEXT_WINDOW ?? 900),
  summaryReserveTokens: selected.provider === 'openai' ? undefined : 80,
  maxOutputTokens: 500,
});

/** The chat route: persistence, stop, regenerate and edit, all from agent-history. */
export const chat = createChatHandler<ChatMessage, typeof tools>({
  // Authorized per thread before the store is touched: another user's thread is 404 (the user-scoped store would
  // refuse it anyway, by row-level security; this check is the app's own, and answers before any work). It is also
  // the first use of the store: a database that is down or not ready answers 503 here (a thrown Response is the
  // handler's answer).
  getHistory: async (_request, { threadId }) => {
    try {
      if (await isOtherUsersThread(threadId, await currentUserId()))
        throw new NotFoundError({ entity: 'thread', id: threadId });
      return await tenantHistory();
    } catch (error) {
      throw errorResponse(error);
    }
  },
  getUserId: () => currentUserId(),
  // "New chat" only makes a uuid in the browser: the thread is created by its first message, and titled after it.
  createThreads: 'on-first-message',
  // A reload or a lost connection mid-answer resumes it (app/api/chat/[id]/stream/route.ts, useChat({ resume: true })).
  resumable: true,
  generateTitle: selected.provider === 'openai' ? selected.model : offlineThreadTitle,
  tools,
  metadataSchema,
  model: {
    agent: ({ prepareStep }) =>
      new ToolLoopAgent({
        model: selected.model,
        instructions: INSTRUCTIONS,
        tools,
        prepareStep,
        maxOutputTokens: 500,
        stopWhen: isStepCount(5),
        // The AI SDK's spans (lib/tracing.ts) without the prompts and answers: a trace carries no message content.
        telemetry: { functionId: 'chat', recordInputs: false, recordOutputs: false },
      }),
  },
  contextManager: ({ history, threadId }) => contextManagerFor({ history, threadId }),
  run: { provider: selected.provider, model: selected.modelId },
});

/** How many messages a page of history holds. */
export const PAGE_SIZE = Number(process.env.CHAT_PAGE_SIZE ?? 20);
