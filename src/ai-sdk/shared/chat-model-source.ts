import type { ModelMessage, PrepareStepFunction, TextStreamPart, ToolSet, UIMessage } from 'ai';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { ChatMemoryTools } from '../working-memory/chat-working-memory.js';

/** What a chat turn needs of a model result: its stream (`streamText`'s result, `agent.stream()`'s result). */
export interface ChatStreamResult<TOOLS extends ToolSet = ToolSet> {
  /** The full stream of the agent's answer. */
  readonly stream: ReadableStream<TextStreamPart<TOOLS>>;
  /** The call's steps once it ends (`StreamTextResult.steps`): the last one names the provider the run records. */
  readonly steps?: PromiseLike<ReadonlyArray<StepModel>>;
}

/** What a finished step says of its model (`StepResult.model`). */
export interface StepModel {
  readonly model?: { readonly provider: string; readonly modelId: string };
}

/**
 * What a chat turn needs of an agent: a `ToolLoopAgent` (or any AI SDK `Agent`) fits. Kept structural so that an
 * agent with concrete tools is accepted whatever the inferred tool set.
 */
export interface ChatAgent<TOOLS extends ToolSet = ToolSet> {
  /** The agent's tools (their schemas validate the stored tool parts). */
  readonly tools: TOOLS;
  /** Streams an answer to `messages` (the agent's `stream`). */
  stream(options: { messages: ModelMessage[]; abortSignal?: AbortSignal }): PromiseLike<ChatStreamResult<TOOLS>>;
}

/** Which turn a model call is for. */
export interface ChatTurnIdentity {
  /** The turn's thread. */
  threadId: string;
  /** The turn's run. */
  runId: string;
}

/**
 * The context manager's `prepareStep` as a turn hands it to the model source. Typed loosely on purpose: an
 * agent with concrete tools does not accept a `PrepareStepFunction<ToolSet>` (the tool names clash), so it is
 * generic over the tools, like the context manager's own `prepareStep`.
 */
export type TurnPrepareStep = <TOOLS extends ToolSet>(
  options: Parameters<PrepareStepFunction<TOOLS>>[0],
) => ReturnType<PrepareStepFunction<TOOLS>>;

/** What a chat turn streams from: an agent, or a `streamText` call of the application's. */
export type ChatModelSource<TOOLS extends ToolSet = ToolSet> =
  | {
      /**
       * A `ToolLoopAgent`, or a function that builds one with the context manager's `prepareStep` (an agent takes
       * `prepareStep` only in its constructor) and the route's `memoryTools` (with `workingMemory` settings).
       */
      agent:
        | ChatAgent<TOOLS>
        | ((
            input: ChatTurnIdentity & { prepareStep?: TurnPrepareStep; memoryTools?: ChatMemoryTools },
          ) => ChatAgent<TOOLS>);
      streamText?: never;
    }
  | {
      /** Calls `streamText` with the given messages, abort signal and `prepareStep`, and returns its result. */
      streamText: (
        input: ChatTurnIdentity & {
          messages: ModelMessage[];
          abortSignal: AbortSignal;
          prepareStep?: TurnPrepareStep;
          /** The route's `updateWorkingMemory` tool for this turn, when it has `workingMemory` settings. */
          memoryTools?: ChatMemoryTools;
        },
      ) => ChatStreamResult<TOOLS> | PromiseLike<ChatStreamResult<TOOLS>>;
      agent?: never;
    };

/**
 * The context engine as a chat turn uses it: how the first step's model messages are built from the thread,
 * and the `prepareStep` that keeps every step within budget. `createContextManager` returns one.
 */
export interface ChatContextManager<TOOLS extends ToolSet = ToolSet> {
  /** The model messages of the first step. @default `convertToModelMessages` of the thread's eligible messages */
  initialMessages?: (input: {
    threadId: string;
    messages: UIMessage[];
  }) => PromiseLike<ModelMessage[]> | ModelMessage[];
  /** Runs before every step (pruning, summary, budget). */
  prepareStep?: PrepareStepFunction<TOOLS> | TurnPrepareStep;
}

/** A context manager, or a function that makes one per turn (it gets the store, the thread and the run). */
export type ChatContextManagerOption<TOOLS extends ToolSet = ToolSet> =
  | ChatContextManager<TOOLS>
  | ((input: {
      history: TenantHistory;
      threadId: string;
      runId: string;
    }) => ChatContextManager<TOOLS> | PromiseLike<ChatContextManager<TOOLS>>);
