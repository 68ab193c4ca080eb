import type { Agent, ModelMessage, PrepareStepFunction, StreamTextResult, ToolSet, UIMessage } from 'ai';
import type { TenantHistory } from '../store/create-agent-history.js';

/** Any AI SDK agent (a `ToolLoopAgent`) whose tools are `TOOLS`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ChatAgent<TOOLS extends ToolSet = ToolSet> = Agent<never, TOOLS, any, any>;

/** Which turn a model call is for. */
export interface ChatTurnIdentity {
  threadId: string;
  runId: string;
}

/** What a chat turn streams from: an agent, or a `streamText` call of the application's. */
export type ChatModelSource<TOOLS extends ToolSet = ToolSet> =
  | {
      /**
       * A `ToolLoopAgent`, or a function that builds one with the context manager's `prepareStep` (an agent takes
       * `prepareStep` only in its constructor).
       */
      agent: ChatAgent<TOOLS> | ((input: ChatTurnIdentity & { prepareStep?: PrepareStepFunction<TOOLS> }) => ChatAgent<TOOLS>);
      streamText?: never;
    }
  | {
      /** Calls `streamText` with the given messages, abort signal and `prepareStep`, and returns its result. */
      streamText: (input: ChatTurnIdentity & {
        messages: ModelMessage[];
        abortSignal: AbortSignal;
        prepareStep?: PrepareStepFunction<TOOLS>;
      }) => // eslint-disable-next-line @typescript-eslint/no-explicit-any
      StreamTextResult<TOOLS, any, any> | PromiseLike<StreamTextResult<TOOLS, any, any>>;
      agent?: never;
    };

/**
 * The context engine as a chat turn uses it: how the first step's model messages are built from the thread,
 * and the `prepareStep` that keeps every step within budget. `createContextManager` returns one.
 */
export interface ChatContextManager<TOOLS extends ToolSet = ToolSet> {
  /** The model messages of the first step. @default `convertToModelMessages` of the thread's eligible messages */
  initialMessages?: (input: { threadId: string; messages: UIMessage[] }) => PromiseLike<ModelMessage[]> | ModelMessage[];
  /** Runs before every step (pruning, summary, budget). */
  prepareStep?: PrepareStepFunction<TOOLS>;
}

/** A context manager, or a function that makes one per turn (it gets the store, the thread and the run). */
export type ChatContextManagerOption<TOOLS extends ToolSet = ToolSet> =
  | ChatContextManager<TOOLS>
  | ((input: { history: TenantHistory; threadId: string; runId: string }) => ChatContextManager<TOOLS> | PromiseLike<ChatContextManager<TOOLS>>);
