import type { ContextStore } from '../../model/context-store.js';
import type { ContextCalibrator } from '../../tokens/context-calibrator.js';
import type { ConvertUIMessageOptions } from '../../tokens/convert-ui-message.js';
import type { ModelProfile } from '../../tokens/model-profile.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import type { ToolDefinition } from '../../tokens/tool-definition-tokens.js';
import type { ContextPolicyInput } from '../contracts/context-policy.js';
import type { ContextReport } from '../contracts/context-report.js';
import type { ContextSummarizer } from '../contracts/context-summarizer.js';
import type { ContextInstructions } from './estimate-prompt-overhead.js';

/** Options of `createContextEngine`. */
export interface CreateContextEngineOptions extends ConvertUIMessageOptions {
  /** The thread's persistence (one tenant, one thread). */
  store: ContextStore;
  /** The model's profile ({@link resolveModelProfile}). */
  profile: ModelProfile;
  /** Policy overrides; see {@link ContextPolicy}. */
  policy?: ContextPolicyInput;
  /** Writes summaries. Without it, turns that do not fit are trimmed. */
  summarizer?: ContextSummarizer;
  /**
   * The raw counter.
   * @default loadO200kTokenCounter()
   */
  tokenCounter?: TokenCounter | Promise<TokenCounter>;
  /**
   * Learns from provider-reported usage; share one per model to keep what it learned.
   * @default createContextCalibrator()
   */
  calibrator?: ContextCalibrator;
  /**
   * The output reserve: pass the `maxOutputTokens` your request uses.
   * @default profile.maxOutputTokens
   */
  maxOutputTokens?: number;
  /**
   * The most tokens a call may be sent (instructions, tool definitions and messages), when it is below what
   * the window leaves; see `computeContextBudget`.
   */
  maxInputTokens?: number;
  /** The tools the model is offered (their definitions take budget). */
  toolDefinitions?: readonly ToolDefinition[] | Promise<readonly ToolDefinition[]>;
  /** The instructions, when the caller does not pass them per call. */
  instructions?: ContextInstructions;
  /** Called with every report. */
  onReport?: (report: ContextReport) => void;
  /** Test hooks. */
  _internal?: {
    /** A clock in milliseconds, for `durationMs`. */
    now?: () => number;
    /** Compacts the whole thread on the first call, never only its newest turns (the reference the tests compare with). */
    wholeThread?: boolean;
  };
}
