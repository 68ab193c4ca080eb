import { convertToModelMessages, type ModelMessage, type TextStreamPart, type ToolSet, type UIMessage } from 'ai';
import type { TenantHistory } from '../../store/tenant-history.js';
import type {
  ChatContextManager,
  ChatContextManagerOption,
  ChatModelSource,
  ChatTurnIdentity,
  TurnPrepareStep,
} from '../shared/chat-model-source.js';
import type { StreamChatTurnOptions } from './chat-turn-options.js';
import { observeSteps, observingPrepareStep, type ObservedModel } from '../answer/observed-model.js';
import { chatMemoryTools, type ChatMemoryTools } from '../working-memory/chat-working-memory.js';

/** Options of {@link startChatModel}: the turn's model options, and what the turn has made of it so far. */
export interface StartChatModelOptions<TOOLS extends ToolSet>
  extends
    ChatTurnIdentity,
    Pick<StreamChatTurnOptions<UIMessage, TOOLS>, 'history' | 'model' | 'contextManager' | 'tools' | 'workingMemory'> {
  /** The thread's messages the answer is built from (the planned turn's `contextMessages`). */
  contextMessages: UIMessage[];
  /** Aborts the model call. */
  abortSignal: AbortSignal;
  /** Filled by every step's `prepareStep` with the model it runs on. @default a fresh object */
  observed?: ObservedModel;
  /**
   * Runs once the first step's messages are built and before the model (or an approved tool) starts: a throw
   * starts nothing. A continued answer claims its message here. @default none
   */
  beforeModel?: () => Promise<void>;
}

/** The model's stream, and the tools it streams with (an agent's own; none for a `streamText` source). */
export interface StartedChatModel<TOOLS extends ToolSet> {
  /** The model's full stream. */
  stream: ReadableStream<TextStreamPart<TOOLS>>;
  /** The agent's tools, or `undefined` for a `streamText` source. */
  tools: TOOLS | undefined;
}

/**
 * Starts the model call of a turn: makes the context manager (if it is a function), builds the first step's
 * model messages with it (or converts the context messages, skipping incomplete tool calls), and calls the
 * agent or `streamText` with them, the abort signal and the manager's `prepareStep`.
 */
export async function startChatModel<TOOLS extends ToolSet>({
  history,
  threadId,
  runId,
  model,
  contextManager,
  workingMemory,
  contextMessages,
  tools,
  abortSignal,
  observed = {},
  beforeModel,
}: StartChatModelOptions<TOOLS>): Promise<StartedChatModel<TOOLS>> {
  const manager = await resolveContextManager(contextManager, { history, threadId, runId });
  const messages: ModelMessage[] = manager?.initialMessages
    ? await manager.initialMessages({ threadId, messages: contextMessages })
    : await convertToModelMessages(contextMessages, { tools, ignoreIncompleteToolCalls: true });
  const memoryTools = await chatMemoryTools(workingMemory, { history, threadId });
  await beforeModel?.();
  return startModel(
    model,
    {
      threadId,
      runId,
      messages,
      abortSignal,
      prepareStep: observingPrepareStep(observed, manager?.prepareStep as unknown as TurnPrepareStep | undefined),
      ...(memoryTools ? { memoryTools } : {}),
    },
    observed,
  );
}

// A manager made per turn needs the run, which exists only once the turn has begun.
async function resolveContextManager<TOOLS extends ToolSet>(
  option: ChatContextManagerOption<TOOLS> | undefined,
  input: { history: TenantHistory; threadId: string; runId: string },
): Promise<ChatContextManager<TOOLS> | undefined> {
  if (option === undefined) return undefined;
  return typeof option === 'function' ? await option(input) : option;
}

// An agent takes \`prepareStep\` only in its constructor, so a function source builds it here; its own tools then
// type and map the tool parts when the route passes none.
async function startModel<TOOLS extends ToolSet>(
  source: ChatModelSource<TOOLS>,
  input: ChatTurnIdentity & {
    messages: ModelMessage[];
    abortSignal: AbortSignal;
    prepareStep?: TurnPrepareStep;
    memoryTools?: ChatMemoryTools;
  },
  observed: ObservedModel,
): Promise<StartedChatModel<TOOLS>> {
  if (source.streamText) {
    const result = await source.streamText(input);
    observeSteps(observed, result.steps);
    return { stream: result.stream, tools: undefined };
  }
  const agent =
    typeof source.agent === 'function'
      ? source.agent({
          threadId: input.threadId,
          runId: input.runId,
          prepareStep: input.prepareStep,
          ...(input.memoryTools ? { memoryTools: input.memoryTools } : {}),
        })
      : source.agent;
  const result = await agent.stream({ messages: input.messages, abortSignal: input.abortSignal });
  observeSteps(observed, result.steps);
  return { stream: result.stream, tools: agent.tools };
}
