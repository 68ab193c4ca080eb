import type { ModelMessage } from 'ai';
import { createContextCalibrator } from '../../tokens/context-calibrator.js';
import { createContextMeasure } from '../../tokens/context-measure.js';
import { loadO200kTokenCounter, scopeTokenCounter, type TokenCounter } from '../../tokens/token-counter.js';
import { countToolDefinitionTokens } from '../../tokens/tool-definition-tokens.js';
import { renderSegments } from '../segments/context-segment.js';
import { assertMaxInputTokens } from '../contracts/context-budget.js';
import { estimateInstructionsTokens } from './estimate-prompt-overhead.js';
import { compactContext } from './compact-context.js';
import type { CompactContextOptions, ContextEngineSettings } from './compact-context-options.js';
import { createContextEngineState, provenanceOf, type ContextEngineState } from './context-engine-state.js';
import { resolveContextPolicy } from '../contracts/context-policy.js';
import type { ContextReport } from '../contracts/context-report.js';
import type { CreateContextEngineOptions } from './create-context-engine-options.js';
import type { ContextInstructions, ToolDefinitionsCount } from './estimate-prompt-overhead.js';
import { parseContextMessages } from './parse-context-messages.js';
import { adoptThread, buildInitial, type EngineInternals } from './adopt-thread.js';
import { differs, repeatedCompaction, repeatedReport } from './repeated-compaction.js';
import { observeStepUsage } from './observe-step-usage.js';
import { traceInitialCompaction, traceStepCompaction } from './trace-compaction.js';

/** The engine behind the AI SDK context manager; independent of `ai`. */
export interface ContextEngine {
  /** Loads the thread, runs every stage, writes a summary and a snapshot when needed, and returns the messages. */
  buildInitialContext(input?: {
    instructions?: ContextInstructions;
  }): Promise<{ messages: ModelMessage[]; report: ContextReport }>;
  /**
   * Runs the in-memory stages on the messages of a step. `messages` is undefined when nothing changed, so a
   * context it already compacted comes back untouched (AI SDK v7 carries returned messages forward).
   */
  prepareStep(input: {
    messages: ModelMessage[];
    stepNumber: number;
    instructions?: ContextInstructions;
    lastStepInputTokens?: number;
  }): Promise<{ messages: ModelMessage[] | undefined; report: ContextReport }>;
  /** The newest report. */
  readonly lastReport: ContextReport | undefined;
}

// What a call passes to a compaction; the engine adds its settings, state and resources.
type CompactRequest = Omit<
  CompactContextOptions,
  'settings' | 'state' | 'tokenCounter' | 'toolDefinitions' | 'calibration'
>;

/**
 * Creates the context engine: the pipeline (validate → filter → convert → memory → prune →
 * select → summarize → trim → snapshot) over a `ContextStore`, with budgets from a `ModelProfile`.
 * `src/ai-sdk`'s `createContextManager` wraps it into a `prepareStep`.
 *
 * The pieces, in the order a call uses them: `loadContextSegments` (stages 1 to 4, from the store) or
 * `parseContextMessages` (a step's messages back into segments), then `compactContext`, which runs
 * `runContextStages`, asks `decideSnapshot` and writes with `writeContextSnapshot`. What is kept between calls
 * is one `ContextEngineState`.
 */
export function createContextEngine(options: CreateContextEngineOptions): ContextEngine {
  const engine = untracedContextEngine(options);
  // Each compaction as an OpenTelemetry span (a step's only when it changed something): see trace-compaction.ts.
  return {
    get lastReport() {
      return engine.lastReport;
    },
    buildInitialContext: (input) => traceInitialCompaction(() => engine.buildInitialContext(input)),
    prepareStep: (input) => traceStepCompaction(() => engine.prepareStep(input)),
  };
}

function untracedContextEngine(options: CreateContextEngineOptions): ContextEngine {
  const { profile, onReport } = options;
  const settings = settingsOf(options);
  const calibrator = options.calibrator ?? createContextCalibrator();
  const state = createContextEngineState();
  const resources = createResourceLoader(options, state);

  async function compact(request: CompactRequest) {
    const loaded = await resources();
    // Read after the await: the calibrator may be shared, and the factor in force is the one at compaction.
    return compactContext({ settings, state, ...loaded, calibration: calibrator.factor, ...request });
  }

  function emit(report: ContextReport) {
    state.lastReport = report;
    onReport?.(report);
  }

  const internals: EngineInternals = { options, settings, state, calibrator, resources, compact, emit };
  return {
    get lastReport() {
      return state.lastReport;
    },

    async buildInitialContext({ instructions = options.instructions } = {}) {
      const { final, report } = await buildInitial(internals, instructions);
      return { messages: renderSegments(final), report };
    },

    async prepareStep({ messages, stepNumber, instructions = options.instructions, lastStepInputTokens }) {
      const input = state.loadedThread ? messages : await adoptThread(internals, messages, instructions);
      const started = settings.now();
      const { tokenCounter } = await resources();
      const repeated = repeatedCompaction(
        state,
        input,
        { lastStepInputTokens, calibration: calibrator.factor },
        (calibration) =>
          estimateInstructionsTokens({
            instructions,
            tokenCounter,
            profile,
            calibration,
            instructionTokenCache: state.instructionTokenCache,
          }),
      );
      if (repeated) {
        const report = repeatedReport(state, repeated, stepNumber, settings.now() - started);
        // As the full compaction decides for a step that changes nothing (by the report last emitted).
        if (stepNumber !== 0 || state.lastReport?.trigger !== 'initial-messages') emit(report);
        const replaced = input !== messages && differs(input, messages);
        return { messages: replaced && input.length > 0 ? input : undefined, report };
      }
      const observation = observeStepUsage({ calibrator, lastEstimate: state.lastEstimate, lastStepInputTokens });
      const measure = createContextMeasure({ tokenCounter, profile, calibration: calibrator.factor });
      const { segments: final, report } = await compact({
        trigger: 'prepare-step',
        stepNumber,
        segments: parseContextMessages({ messages: input, registry: provenanceOf(state), measure }),
        stages: [],
        instructions,
        observation,
        started,
        memory: false,
      });
      const output = renderSegments(final);
      // Equal by value: a copy of what the engine returned is unchanged.
      const changed = differs(output, input);
      const finalReport = { ...report, changed };
      // Step 0 after buildInitialContext gets the messages it built: its report would repeat the initial one.
      if (changed || stepNumber !== 0 || state.lastReport?.trigger !== 'initial-messages') emit(finalReport);
      const replaced = input === messages ? changed : differs(output, messages);
      return { messages: replaced && output.length > 0 ? output : undefined, report: finalReport };
    },
  };
}

let engines = 0;

// The counter and the tools may still be loading when the engine is created; the tools are counted once, on
// first use, and kept in the state.
function createResourceLoader(
  { tokenCounter, toolDefinitions }: Pick<CreateContextEngineOptions, 'tokenCounter' | 'toolDefinitions'>,
  state: ContextEngineState,
): () => Promise<{ tokenCounter: TokenCounter; toolDefinitions: ToolDefinitionsCount }> {
  // The default counter's cache is the engine's own (an engine serves one thread), never another tenant's.
  const counterPromise = Promise.resolve(
    tokenCounter ?? loadO200kTokenCounter().then((counter) => scopeTokenCounter(counter, `engine:${++engines}`)),
  );
  const toolsPromise = Promise.resolve(toolDefinitions ?? []);
  return async () => {
    const counter = await counterPromise;
    if (!state.toolDefinitions) {
      const tools = await toolsPromise;
      state.toolDefinitions = {
        rawTokens: countToolDefinitionTokens({ tools, tokenCounter: counter }),
        toolCount: tools.length,
      };
    }
    return { tokenCounter: counter, toolDefinitions: state.toolDefinitions };
  };
}

// Checked when the engine is created, so a bad option fails before anything is read or written.
function settingsOf(options: CreateContextEngineOptions): ContextEngineSettings {
  if (options.maxInputTokens !== undefined) assertMaxInputTokens(options.maxInputTokens);
  return {
    store: options.store,
    profile: options.profile,
    policy: resolveContextPolicy(options.policy),
    summarizer: options.summarizer,
    maxOutputTokens: options.maxOutputTokens,
    maxInputTokens: options.maxInputTokens,
    now: options._internal?.now ?? (() => performance.now()),
  };
}
