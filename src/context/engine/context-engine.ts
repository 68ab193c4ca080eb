import type { ModelMessage } from 'ai';
import { AgentHistoryError } from '../../errors/agent-history-error.js';
import { VersionConflictError } from '../../errors/version-conflict-error.js';
import { computeContextBudget, type ContextBudget } from './context-budget.js';
import { createContextCalibrator, type ContextCalibrator } from '../../tokens/context-calibrator.js';
import { ContextEmptyError } from './context-empty-error.js';
import { createContextMeasure, estimateTokens, type ContextMeasure } from '../../tokens/context-measure.js';
import { resolveContextPolicy, type ContextPolicy, type ContextPolicyInput } from './context-policy.js';
import type { ContextRemoval } from '../segments/context-removal.js';
import type {
  ContextReport,
  ContextSnapshotReport,
  ContextStageReport,
  SummarizeStageReport,
} from './context-report.js';
import {
  createMessageSegment,
  estimateSegments,
  findCurrentInputIndex,
  renderSegments,
  type ContextSegment,
  type SummarySegment,
} from '../segments/context-segment.js';
import type { ContextSnapshotPruning } from './context-snapshot-pruning.js';
import type { ContextStore, ContextMessage, ContextSnapshot } from '../../model/context-store.js';
import type { ContextSummarizer } from './context-summarizer.js';
import { convertToContextSegments } from '../stages/convert-to-context-segments.js';
import type { ConvertUIMessageOptions } from '../../tokens/convert-ui-message.js';
import { filterStoredMessages } from '../stages/filter-stored-messages.js';
import { hashContextMessages } from './hash-context-messages.js';
import { findRelevantMemory } from '../stages/find-relevant-memory.js';
import type { ModelProfile } from '../../tokens/model-profile.js';
import { pruneContext } from '../stages/prune-context.js';
import { selectContext } from '../stages/select-context.js';
import { summarizeContext } from '../stages/summarize-context.js';
import { createSummarySegment } from '../segments/summary-segment.js';
import { loadO200kTokenCounter, type TokenCounter } from '../../tokens/token-counter.js';
import {
  countToolDefinitionTokens,
  estimateToolDefinitionTokens,
  type ToolDefinition,
} from '../../tokens/tool-definition-tokens.js';
import { previewOversizedOutputs, trimContext } from '../stages/trim-context.js';
import { validateStoredMessages } from '../stages/validate-stored-messages.js';

/** Instructions as the AI SDK takes them: a string, a system message, or several. */
export type ContextInstructions = string | { content: string } | ReadonlyArray<{ content: string }> | undefined;

/** Options of {@link createContextEngine}. */
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
  };
}

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

interface Provenance {
  segment: ContextSegment;
  position: number;
}

interface CompactInput {
  trigger: ContextReport['trigger'];
  stepNumber: number | null;
  segments: ContextSegment[];
  stages: ContextStageReport[];
  instructions: ContextInstructions;
  observation: { observedInputTokens: number | null; estimatedInputTokens: number | null };
  started: number;
  /** Whether to run the memory step (once per request, when the context is built from the store). */
  memory: boolean;
}

/**
 * Creates the context engine: the pipeline of DESIGN.md (validate → filter → convert → memory → prune →
 * select → summarize → trim → snapshot) over a {@link ContextStore}, with budgets from a {@link ModelProfile}.
 * `src/ai-sdk`'s `createContextManager` wraps it into a `prepareStep`.
 */
export function createContextEngine(options: CreateContextEngineOptions): ContextEngine {
  const { store, profile, summarizer, onReport, convertToolOutput, convertDataPart } = options;
  const policy: ContextPolicy = resolveContextPolicy(options.policy);
  const calibrator = options.calibrator ?? createContextCalibrator();
  const now = options._internal?.now ?? (() => performance.now());
  const counterPromise = Promise.resolve(options.tokenCounter ?? loadO200kTokenCounter());
  const toolsPromise = Promise.resolve(options.toolDefinitions ?? []);
  const registry = new WeakMap<ModelMessage, Provenance>();
  const instructionTokens = new Map<string, number>();
  let toolRawTokens: { raw: number; count: number } | undefined;
  let lastReport: ContextReport | undefined;
  let lastEstimate: number | undefined;
  let knownVersion = 0;
  let knownSnapshot: ContextSnapshot | null = null;
  let loadedBoundary = 0;
  let loaded = false;
  const cumulative = {
    reasoning: new Set<number>(),
    toolCallIds: new Set<string>(),
    previews: new Map<string, number>(),
    trimmed: new Set<number>(),
  };

  async function resources() {
    const tokenCounter = await counterPromise;
    if (!toolRawTokens) {
      const tools = await toolsPromise;
      toolRawTokens = { raw: countToolDefinitionTokens({ tools, tokenCounter }), count: tools.length };
    }
    return { tokenCounter, tools: toolRawTokens };
  }

  function instructionsEstimate(
    instructions: ContextInstructions,
    tokenCounter: TokenCounter,
    calibration: number,
  ): number {
    if (instructions === undefined) return 0;
    const list =
      typeof instructions === 'string'
        ? [instructions]
        : 'content' in instructions
          ? [instructions.content]
          : [...instructions].map((message) => message.content);
    let text = 0;
    for (const item of list) {
      let tokens = instructionTokens.get(item);
      if (tokens === undefined) {
        tokens = tokenCounter.count(item);
        if (instructionTokens.size > 32) instructionTokens.clear();
        instructionTokens.set(item, tokens);
      }
      text += tokens;
    }
    return estimateTokens({ text, images: 0, files: 0, messages: list.length }, profile, calibration);
  }

  function register(segments: readonly ContextSegment[]) {
    for (const segment of segments) {
      if (segment.messages.length > 0 && registry.get(segment.messages[0]!)?.segment === segment) continue;
      segment.messages.forEach((message, position) => registry.set(message, { segment, position }));
    }
  }

  function parse(messages: readonly ModelMessage[], measure: ContextMeasure): ContextSegment[] {
    const segments: ContextSegment[] = [];
    let index = 0;
    while (index < messages.length) {
      const known = registry.get(messages[index]!);
      if (
        known &&
        known.position === 0 &&
        known.segment.messages.every((message, offset) => messages[index + offset] === message)
      ) {
        segments.push(known.segment);
        index += known.segment.messages.length;
        continue;
      }
      // Not built by this engine (the current request's steps, or messages the caller made): an assistant
      // message and the tool messages after it form one segment, so that a call stays with its results.
      const group = [messages[index]!];
      index += 1;
      if (group[0]!.role === 'assistant') {
        while (index < messages.length && messages[index]!.role === 'tool' && !registry.has(messages[index]!))
          group.push(messages[index++]!);
      }
      segments.push(createMessageSegment({ messages: group, sequence: null, measure }));
    }
    return segments;
  }

  async function compact(input: CompactInput): Promise<{ segments: ContextSegment[]; report: ContextReport }> {
    const { tokenCounter, tools } = await resources();
    const calibration = calibrator.factor;
    const measure = createContextMeasure({ tokenCounter, profile, calibration });
    const instructionsTokens = instructionsEstimate(input.instructions, tokenCounter, calibration);
    const toolDefinitionsTokens = estimateToolDefinitionTokens({
      rawTokens: tools.raw,
      toolCount: tools.count,
      profile,
      calibration,
    });
    const budgetFor = (segments: readonly ContextSegment[]): ContextBudget => {
      const currentIndex = findCurrentInputIndex(segments);
      const currentInputTokens = currentIndex >= 0 ? measure.estimate(segments[currentIndex]!.tokens) : 0;
      return computeContextBudget({
        profile,
        maxOutputTokens: options.maxOutputTokens,
        instructionsTokens,
        toolDefinitionsTokens,
        currentInputTokens,
        historyTokens: estimateSegments(segments, measure) - currentInputTokens,
        calibration,
      });
    };
    const initialBudget = budgetFor(input.segments);
    const messageBudget = initialBudget.availableTokens + initialBudget.currentInputTokens;

    const prunedOnly = pruneContext({ segments: input.segments, measure, messageBudget, policy: policy.prune });
    // A huge tool output in the newest turn is shortened before anything is selected or summarized for it.
    const previewed = previewOversizedOutputs({
      segments: prunedOnly.segments,
      measure,
      messageBudget,
      preview: policy.toolOutputPreview,
    });
    const pruned = { ...prunedOnly, segments: previewed.segments };
    const previousSummary =
      (pruned.segments.find((segment) => segment.kind === 'summary') as SummarySegment | undefined) ?? null;
    // Compact below the budget (to `targetRatio`), so that the next steps and turns fit without compacting again:
    // fewer summaries and snapshots, and a stable prefix for provider prompt caches.
    const trimTarget = Math.floor(messageBudget * policy.summary.targetRatio);
    const target = summarizer ? trimTarget - policy.summary.reserveTokens : trimTarget;
    let selected = selectContext({
      segments: pruned.segments,
      measure,
      messageBudget,
      targetTokens: target,
      overflowReason: summarizer ? 'turn-summarized' : 'turn-trimmed',
    });
    let summarize: SummarizeStageReport = {
      stage: 'summarize',
      status: previousSummary ? 'reused' : 'not-needed',
      summaryId: previousSummary?.summaryId ?? null,
      fromSequence: previousSummary?.fromSequence ?? null,
      throughSequence: previousSummary?.throughSequence ?? null,
      rounds: 0,
      error: null,
      removed: [],
      tokensSaved: 0,
    };
    let segments = selected.segments;
    let newSummary = false;
    if (selected.overflow.length > 0) {
      // The summarizer reads the turns as they were before pruning, so that dropped tool traffic is not lost.
      const original = new Map(
        input.segments.flatMap((segment) =>
          segment.kind === 'message' && segment.sequence !== null ? [[segment.sequence, segment] as const] : [],
        ),
      );
      const overflow = selected.overflow.map((turn) =>
        turn.map((segment) => (segment.sequence !== null ? original.get(segment.sequence) : undefined) ?? segment),
      );
      const outcome = summarizer
        ? await summarizeContext({
            overflow,
            previous: previousSummary,
            summarizer,
            store,
            measure,
            policy: policy.summary,
            policyVersion: policy.version,
          })
        : { status: 'failed' as const, error: 'no summarizer is configured', rounds: 0 };
      if (outcome.status === 'created') {
        newSummary = true;
        const summary = outcome.summary;
        segments = previousSummary
          ? segments.map((segment) => (segment === previousSummary ? summary : segment))
          : [summary, ...segments];
        const growth =
          measure.estimate(summary.tokens) - (previousSummary ? measure.estimate(previousSummary.tokens) : 0);
        summarize = {
          stage: 'summarize',
          status: 'created',
          summaryId: summary.summaryId,
          fromSequence: summary.fromSequence,
          throughSequence: summary.throughSequence,
          rounds: outcome.rounds,
          error: null,
          removed: selected.report.removed,
          tokensSaved: selected.report.tokensSaved - growth,
        };
      } else {
        summarize = {
          ...summarize,
          status: summarizer ? 'failed' : 'skipped',
          rounds: outcome.rounds,
          error: outcome.error,
        };
        if (summarizer) {
          // Fall back to trimming: select again against the whole budget, reporting the turns as trimmed.
          selected = selectContext({
            segments: pruned.segments,
            measure,
            messageBudget,
            targetTokens: trimTarget,
            overflowReason: 'turn-trimmed',
          });
          segments = selected.segments;
        }
      }
    }
    const memoryStages: ContextStageReport[] = [];
    if (input.memory) {
      const memory = await findRelevantMemory({ store, segments, measure, policy });
      memoryStages.push(memory.report);
      if (memory.segment) {
        const after = segments.findIndex((segment) => segment.kind === 'summary') + 1;
        segments = [...segments.slice(0, after), memory.segment, ...segments.slice(after)];
      }
    }
    const trimmedOnly = trimContext({ segments, measure, messageBudget, preview: policy.toolOutputPreview });
    const trimmed = {
      segments: trimmedOnly.segments,
      previews: [...previewed.previews, ...trimmedOnly.previews],
      report: {
        ...trimmedOnly.report,
        removed: [...previewed.report.removed, ...trimmedOnly.report.removed],
        previews: [...previewed.previews, ...trimmedOnly.previews],
        tokensSaved: previewed.report.tokensSaved + trimmedOnly.report.tokensSaved,
      },
    };
    const final = trimmed.segments;
    const stages: ContextStageReport[] = [
      ...input.stages,
      pruned.report,
      selected.report,
      summarize,
      ...memoryStages,
      trimmed.report,
    ];

    // What this call compacted in the stored part of the context (a snapshot is written only then).
    const storedRemovals = (reason: ContextRemoval['reason'], removed: readonly ContextRemoval[]) =>
      removed.filter((entry) => entry.reason === reason && entry.sequence !== null);
    const trimmedStored = [
      ...storedRemovals('turn-trimmed', selected.report.removed),
      ...storedRemovals('turn-trimmed', trimmed.report.removed),
    ].map((entry) => entry.sequence as number);
    const previewedStored = storedRemovals('tool-output-previewed', trimmed.report.removed);
    const toolPrunedStored = storedRemovals('tool-traffic-pruned', pruned.report.removed);
    const droppedArtifacts = trimmed.report.removed.some(
      (entry) => entry.reason === 'summary-dropped' || entry.reason === 'memory-dropped',
    );
    for (const sequence of pruned.pruning.reasoningSequences) cumulative.reasoning.add(sequence);
    for (const id of pruned.pruning.toolCallIds) cumulative.toolCallIds.add(id);
    for (const preview of trimmed.previews) cumulative.previews.set(preview.toolCallId, preview.maxTokens);
    for (const sequence of trimmedStored) cumulative.trimmed.add(sequence);

    let snapshot: ContextSnapshotReport = {
      status: 'not-needed',
      version: knownVersion || null,
      throughSequence: null,
      messagesHash: null,
    };
    // Only an engine that loaded the thread knows its version and boundary; one that only ever saw a caller's
    // messages never writes a snapshot (it would conflict or describe the wrong log).
    if (
      loaded &&
      (newSummary ||
        trimmedStored.length > 0 ||
        previewedStored.length > 0 ||
        toolPrunedStored.length > 0 ||
        droppedArtifacts)
    ) {
      snapshot = await writeSnapshot(
        final,
        pruned.pruning.emptyMessages,
        (segments.find((segment) => segment.kind === 'summary') as SummarySegment | undefined) ?? previousSummary,
        budgetFor(final),
      );
    }

    const messages = renderSegments(final);
    const budget = budgetFor(final);
    const report: ContextReport = {
      trigger: input.trigger,
      stepNumber: input.stepNumber,
      changed: true,
      messageCount: messages.length,
      estimatedTokens:
        budget.instructionsTokens + budget.toolDefinitionsTokens + budget.currentInputTokens + budget.historyTokens,
      budget,
      stages,
      snapshot,
      calibration: { factor: calibration, ...input.observation },
      durationMs: now() - input.started,
    };
    register(final);
    const baseMeasure = createContextMeasure({ tokenCounter, profile });
    lastEstimate =
      instructionsEstimate(input.instructions, tokenCounter, 1) +
      estimateToolDefinitionTokens({ rawTokens: tools.raw, toolCount: tools.count, profile }) +
      estimateSegments(final, baseMeasure);
    return { segments: final, report };
  }

  async function writeSnapshot(
    final: readonly ContextSegment[],
    emptyMessages: 'remove' | 'keep',
    activeSummary: SummarySegment | null,
    budget: ContextBudget,
  ): Promise<ContextSnapshotReport> {
    const stored = final.filter((segment) => segment.kind !== 'message' || segment.sequence !== null);
    const messagesHash = hashContextMessages(renderSegments(stored));
    if (knownSnapshot?.messagesHash === messagesHash)
      return {
        status: 'unchanged',
        version: knownVersion,
        throughSequence: knownSnapshot.throughSequence,
        messagesHash,
      };
    const includedSequences = [
      ...new Set(
        stored.flatMap((segment) =>
          segment.kind === 'message' && segment.sequence !== null ? [segment.sequence] : [],
        ),
      ),
    ].sort((a, b) => a - b);
    const trimmedMax = Math.max(0, ...cumulative.trimmed);
    const throughSequence = Math.max(loadedBoundary, activeSummary?.throughSequence ?? 0, summarizer ? 0 : trimmedMax);
    const memory = final.find((segment) => segment.kind === 'memory');
    const pruned: ContextSnapshotPruning = {
      reasoningSequences: includedSequences.filter((sequence) => cumulative.reasoning.has(sequence)),
      toolCallIds: [...cumulative.toolCallIds].sort(),
      emptyMessages,
      previews: [...cumulative.previews]
        .map(([toolCallId, maxTokens]) => ({ toolCallId, maxTokens }))
        .sort((a, b) => a.toolCallId.localeCompare(b.toolCallId)),
      trimmedSequences: [...cumulative.trimmed].filter((sequence) => sequence > throughSequence).sort((a, b) => a - b),
      memorySequences: memory?.kind === 'memory' ? memory.sequences : [],
    };
    const summaryInContext = final.find((segment) => segment.kind === 'summary') as SummarySegment | undefined;
    try {
      const written = await store.writeSnapshot({
        expectedVersion: knownVersion,
        throughSequence,
        summaryId: summaryInContext?.summaryId ?? null,
        includedSequences,
        pruned,
        budget,
        policyVersion: policy.version,
        messagesHash,
      });
      knownVersion = written.version;
      knownSnapshot = written;
      return { status: 'written', version: written.version, throughSequence, messagesHash };
    } catch (error) {
      if (
        policy.snapshotConflicts === 'report' &&
        (error instanceof VersionConflictError ||
          (AgentHistoryError.isInstance(error) && error.code === 'version-conflict'))
      ) {
        return {
          status: 'conflict',
          version: (error as VersionConflictError).actualVersion ?? null,
          throughSequence,
          messagesHash,
        };
      }
      throw error;
    }
  }

  function emit(report: ContextReport) {
    lastReport = report;
    onReport?.(report);
  }

  return {
    get lastReport() {
      return lastReport;
    },

    async buildInitialContext({ instructions = options.instructions } = {}) {
      const started = now();
      const { tokenCounter } = await resources();
      const view = await store.loadContext();
      loaded = true;
      knownVersion = view.currentVersion;
      knownSnapshot = view.snapshot;
      loadedBoundary = view.snapshot?.throughSequence ?? 0;
      cumulative.reasoning.clear();
      cumulative.toolCallIds.clear();
      cumulative.previews.clear();
      cumulative.trimmed.clear();
      const summary = view.latestSummary && !view.latestSummary.stale ? view.latestSummary : null;
      const bySequence = new Map<number, ContextMessage>();
      for (const message of [...view.pinned, ...view.tail]) bySequence.set(message.sequence, message);
      const candidates = [...bySequence.values()]
        .sort((a, b) => a.sequence - b.sequence)
        .filter((message) => message.pinned === true || message.sequence > (summary?.throughSequence ?? 0));
      const measure = createContextMeasure({ tokenCounter, profile, calibration: calibrator.factor });
      const validated = validateStoredMessages({ messages: candidates });
      const filtered = filterStoredMessages({
        messages: validated.messages,
        assistantStatuses: policy.assistantStatuses,
      });
      const converted = convertToContextSegments({
        messages: filtered.messages,
        measure,
        convertToolOutput,
        convertDataPart,
      });
      if (converted.segments.length === 0) throw new ContextEmptyError({ loadedMessages: bySequence.size });
      const segments: ContextSegment[] = [];
      if (summary) segments.push(createSummarySegment({ summary, measure }));
      segments.push(...converted.segments);
      const { segments: final, report } = await compact({
        trigger: 'initial-messages',
        stepNumber: null,
        segments,
        stages: [validated.report, filtered.report, converted.report],
        instructions,
        observation: { observedInputTokens: null, estimatedInputTokens: null },
        started,
        memory: true,
      });
      emit(report);
      return { messages: renderSegments(final), report };
    },

    async prepareStep({ messages, stepNumber, instructions = options.instructions, lastStepInputTokens }) {
      const started = now();
      const { tokenCounter } = await resources();
      const observation = {
        observedInputTokens: lastStepInputTokens ?? null,
        estimatedInputTokens: lastStepInputTokens !== undefined ? (lastEstimate ?? null) : null,
      };
      if (lastStepInputTokens !== undefined && lastEstimate !== undefined)
        calibrator.observe({ estimatedTokens: lastEstimate, actualTokens: lastStepInputTokens });
      const segments = parse(messages, createContextMeasure({ tokenCounter, profile, calibration: calibrator.factor }));
      const { segments: final, report } = await compact({
        trigger: 'prepare-step',
        stepNumber,
        segments,
        stages: [],
        instructions,
        observation,
        started,
        memory: false,
      });
      const output = renderSegments(final);
      const changed = output.length !== messages.length || output.some((message, index) => message !== messages[index]);
      const finalReport = { ...report, changed };
      emit(finalReport);
      return { messages: changed && output.length > 0 ? output : undefined, report: finalReport };
    },
  };
}
