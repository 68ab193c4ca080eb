import { toolModelOutputs } from './tool-model-outputs.js';
import type { Instructions, ModelMessage, PrepareStepFunction, ToolSet } from 'ai';
import type { ContextCalibrator } from '../../tokens/context-calibrator.js';
import { createContextEngine } from '../../context/engine/context-engine.js';
import type { ContextInstructions } from '../../context/engine/estimate-prompt-overhead.js';
import type { ContextPolicyInput } from '../../context/contracts/context-policy.js';
import type { ContextReport } from '../../context/contracts/context-report.js';
import type { ContextStore } from '../../model/context-store.js';
import type { ContextSummarizer } from '../../context/contracts/context-summarizer.js';
import type { ConvertUIMessageOptions } from '../../tokens/convert-ui-message.js';
import type { ModelProfile } from '../../tokens/model-profile.js';
import { resolveManagerProfile } from './resolve-manager-profile.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { toolDefinitionsOf } from './tool-definitions-of.js';

import type { ContextManagerModel } from './resolve-manager-profile.js';

/** Options of {@link createContextManager}. */
export interface CreateContextManagerOptions extends ConvertUIMessageOptions {
  /**
   * The names of the tools the model has now: a tool part stored as unavailable whose tool is among them is sent
   * with its output (see `ConvertUIMessageOptions`). @default the names of `tools`
   */
  availableTools?: readonly string[];
  /** The thread's persistence, bound to one tenant and one thread. */
  store: ContextStore;
  /**
   * The model the context is built for: `'gpt-4o'`, `'anthropic:claude-sonnet-4-5'`, the AI SDK model object
   * itself (resolved by its `modelId`, its `provider` giving the tokenizer family when the id does not), or a
   * profile from `resolveModelProfile`. Its window, output limit and tokenizer factor set the budget. A model the
   * table lacks throws `ModelProfileNotFoundError` unless `modelProfile` gives its limits or `maxInputTokens` is set.
   */
  model: ContextManagerModel;
  /** Fields that replace the model's profile (for a model the table does not know: `contextWindow` and `maxOutputTokens`). */
  modelProfile?: Partial<Omit<ModelProfile, 'modelId'>>;
  /**
   * The budget: the most tokens one model call may be sent (instructions, tool definitions and messages, as the
   * provider reports `usage.inputTokens`). It applies when it is below what the window leaves (window − output
   * reserve − safety margin); no margin is taken off it. For a model the table lacks it is enough on its own.
   * @default what the model's window leaves
   */
  maxInputTokens?: number;
  /**
   * Writes summaries of turns that no longer fit; see `createGenerateTextSummarizer` and `createOfflineSummarizer`.
   * Without it, such turns are trimmed.
   */
  summarizer?: ContextSummarizer;
  /** Policy overrides (pruning, summary sizes, memory, previews, conflicts). */
  policy?: ContextPolicyInput;
  /**
   * The raw token counter.
   * @default loadO200kTokenCounter()
   */
  tokenCounter?: TokenCounter | Promise<TokenCounter>;
  /** The tools the model is offered: their definitions (name, description, JSON schema) take budget. */
  tools?: ToolSet;
  /** The instructions, used by `initialMessages` (a step's own instructions are read from `prepareStep`). */
  instructions?: Instructions;
  /**
   * The `maxOutputTokens` the request asks for: the output reserve.
   * @default the model's maximum output
   */
  maxOutputTokens?: number;
  /**
   * Learns from `usage.inputTokens`. Share one per model across requests to keep what it learned.
   * @default createContextCalibrator()
   */
  calibrator?: ContextCalibrator;
  /** Called with the report of every request and step. */
  onReport?: (report: ContextReport) => void;
  /** Test hooks. */
  _internal?: {
    /** A clock in milliseconds, for `durationMs`. */
    now?: () => number;
  };
}

/** What {@link createContextManager} returns. */
export interface ContextManager {
  /**
   * The model messages for the first step of a request: the thread loaded from the store and run through every
   * stage (summary, snapshot included). Store the user's message before calling it. The `threadId` and
   * `messages` a chat handler passes are ignored: the store is the record.
   */
  initialMessages(input?: {
    instructions?: Instructions;
    threadId?: string;
    messages?: readonly unknown[];
  }): Promise<ModelMessage[]>;
  /**
   * The `prepareStep` for `ToolLoopAgent`, `generateText` and `streamText`. It returns `undefined` when the
   * messages fit and need nothing, so a context it already compacted passes unchanged (AI SDK v7 carries a
   * returned `messages` forward); otherwise `{ messages }`, never empty and never with a system message. It
   * calibrates on the previous step's `usage.inputTokens`.
   */
  prepareStep: <TOOLS extends ToolSet>(
    options: Parameters<PrepareStepFunction<TOOLS>>[0],
  ) => Promise<Awaited<ReturnType<PrepareStepFunction<TOOLS>>>>;
  /** The report of the newest request or step: budget breakdown and what each stage did. */
  readonly lastReport: ContextReport | undefined;
}

/**
 * The context engine for AI SDK v7: budgets from the model's profile, exact o200k counts (stored counts used
 * as they are), pruning, incremental summaries, whole-turn trimming and versioned snapshots.
 *
 * @example
 * const context = createContextManager({ store, model, tools, instructions, maxOutputTokens: 4096, summarizer: createGenerateTextSummarizer({ model: small }) });
 * const agent = new ToolLoopAgent({ model, tools, instructions, maxOutputTokens: 4096, prepareStep: context.prepareStep });
 * const result = await agent.stream({ messages: await context.initialMessages() });
 */
export function createContextManager({
  store,
  model,
  modelProfile,
  summarizer,
  policy,
  tokenCounter,
  tools,
  instructions,
  maxOutputTokens,
  maxInputTokens,
  calibrator,
  onReport,
  convertToolOutput,
  convertDataPart,
  availableTools = tools ? Object.keys(tools) : undefined,
  _internal,
}: CreateContextManagerOptions): ContextManager {
  const fromTools = toolModelOutputs(tools);
  const engine = createContextEngine({
    store: fromTools.wrap(store),
    profile: resolveManagerProfile({ model, overrides: modelProfile, maxInputTokens, maxOutputTokens }),
    policy,
    summarizer,
    tokenCounter,
    calibrator,
    maxOutputTokens,
    maxInputTokens,
    toolDefinitions: tools ? toolDefinitionsOf(tools) : undefined,
    instructions: instructions as ContextInstructions,
    onReport,
    convertToolOutput: fromTools.converter(convertToolOutput),
    convertDataPart,
    availableTools,
    _internal,
  });
  return {
    get lastReport() {
      return engine.lastReport;
    },
    async initialMessages({ instructions: callInstructions } = {}) {
      const { messages } = await engine.buildInitialContext({
        instructions: (callInstructions ?? instructions) as ContextInstructions,
      });
      return messages;
    },
    async prepareStep({ messages, steps, stepNumber, instructions: stepInstructions }) {
      const { messages: compacted } = await engine.prepareStep({
        messages,
        stepNumber,
        instructions: stepInstructions as ContextInstructions,
        lastStepInputTokens: steps.at(-1)?.usage.inputTokens,
      });
      return compacted ? { messages: compacted } : undefined;
    },
  };
}
