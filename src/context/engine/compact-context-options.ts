import type { ContextStore } from '../../model/context-store.js';
import type { ModelProfile } from '../../tokens/model-profile.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import type { ContextPolicy } from '../contracts/context-policy.js';
import type { ContextReport, ContextStageReport } from '../contracts/context-report.js';
import type { ContextSummarizer } from '../contracts/context-summarizer.js';
import type { ContextSegment } from '../segments/context-segment.js';
import type { ContextEngineState } from './context-engine-state.js';
import type { ContextInstructions, ToolDefinitionsCount } from './estimate-prompt-overhead.js';

/** What stays the same for every compaction of one engine. */
export interface ContextEngineSettings {
  /** The thread's persistence. */
  store: ContextStore;
  /** The model's profile. */
  profile: ModelProfile;
  /** The resolved policy. */
  policy: ContextPolicy;
  /** Writes summaries; without it, the turns that do not fit are trimmed. */
  summarizer: ContextSummarizer | undefined;
  /** The output reserve; defaults to the profile's. */
  maxOutputTokens: number | undefined;
  /** The caller's cap on the whole input, if any. */
  maxInputTokens: number | undefined;
  /** A clock in milliseconds, for `durationMs`. */
  now: () => number;
}

/** Options of `compactContext`. */
export interface CompactContextOptions {
  /** The engine's settings. */
  settings: ContextEngineSettings;
  /** The engine's state: read for the snapshot, updated with what was compacted and returned. */
  state: ContextEngineState;
  /** Counts tokens. */
  tokenCounter: TokenCounter;
  /** The tools' raw size. */
  toolDefinitions: ToolDefinitionsCount;
  /** The calibration factor in force. */
  calibration: number;
  /** What built the context. */
  trigger: ContextReport['trigger'];
  /** The step number, for `prepare-step`. */
  stepNumber: number | null;
  /** The context to compact. */
  segments: ContextSegment[];
  /** The reports of the stages that built `segments` (validate, filter, convert), listed first. */
  stages: ContextStageReport[];
  /**
   * The loaded context before the previous cut was applied to `segments` (`carryPreviousCut`): the summarizer reads
   * the turns it folds from here, as they were. @default `segments`
   */
  original?: readonly ContextSegment[];
  /** The instructions of the call. */
  instructions: ContextInstructions;
  /** The provider-reported usage that updated the calibration, and the estimate it was compared with. */
  observation: { observedInputTokens: number | null; estimatedInputTokens: number | null };
  /** When the call started (`settings.now()`). */
  started: number;
  /** Whether to run the memory step (once per request, when the context is built from the store). */
  memory: boolean;
  /**
   * Set when `segments` are the newest turns of the thread only: the sequence of the window's first message, and
   * the whole thread's segments and stage reports, compacted instead when the window did not hold
   * (`windowHeld`).
   */
  window?: {
    firstSequence: number;
    /** The least the turns left out add to the estimate: the stages add it where they compare with the budget. */
    outsideTokens: number;
    /**
     * The most they add once the whole thread's pruning reaches the window: where a decision turns on the exact
     * amount, the stages decide with both bounds, and the window holds only when the two agree.
     */
    outsideTokensAtMost: number;
    whole: () => { segments: ContextSegment[]; stages: ContextStageReport[] };
  };
}
