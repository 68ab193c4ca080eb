import type { ModelMessage } from 'ai';
import type { ContextCalibrator } from '../../tokens/context-calibrator.js';
import { createContextMeasure } from '../../tokens/context-measure.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { renderSegments, type ContextSegment } from '../segments/context-segment.js';
import { lastAlignedIndex } from './last-aligned-index.js';
import { withoutOrphanedAnswers } from './without-orphaned-answers.js';
import type { CompactContextOptions, ContextEngineSettings } from './compact-context-options.js';
import { ContextEmptyError } from '../contracts/context-empty-error.js';
import {
  forgetCompactions,
  recordCompaction,
  recordLoadedContext,
  type ContextEngineState,
} from './context-engine-state.js';
import { carryFrom } from './carry-previous-cut.js';
import type { CreateContextEngineOptions } from './create-context-engine-options.js';
import type { ContextReport } from '../contracts/context-report.js';
import type { ContextInstructions } from './estimate-prompt-overhead.js';
import {
  loadContextSegments,
  type LoadContextSegmentsOptions,
  type LoadedContextSegments,
} from './load-context-segments.js';
import type { LoadedContext } from '../../model/context-store.js';
import type { ContextWindowSize } from './context-window.js';

/** What one engine's calls share (see `createContextEngine`). */
export interface EngineInternals {
  /** The engine's options. */
  options: CreateContextEngineOptions;
  /** Its settings. */
  settings: ContextEngineSettings;
  /** Its state. */
  state: ContextEngineState;
  /** Its calibrator. */
  calibrator: ContextCalibrator;
  /** The counter, once loaded. */
  resources: () => Promise<{ tokenCounter: TokenCounter }>;
  /** Runs one compaction with the engine's settings. */
  compact: (
    request: Omit<CompactContextOptions, 'settings' | 'state' | 'tokenCounter' | 'toolDefinitions' | 'calibration'>,
  ) => Promise<{ segments: ContextSegment[]; report: ContextReport }>;
  /** Records and publishes a report. */
  emit: (report: ContextReport) => void;
}

/**
 * Stages 1 to 4 from the store, then every other stage (the `initialMessages()` path); `loaded` is the context
 * before the compaction (the whole thread's, with `whole`). Without a summarizer or custom conversions, a long
 * thread is compacted from its newest turns ({@link contextWindowSize}) unless `whole` is set.
 */
export async function buildInitial(
  { options, settings, state, calibrator, resources, compact, emit }: EngineInternals,
  instructions: ContextInstructions | undefined,
  whole = false,
): Promise<{ final: ContextSegment[]; report: ContextReport; loaded: ContextSegment[] }> {
  const started = settings.now();
  const { tokenCounter } = await resources();
  const measure = createContextMeasure({ tokenCounter, profile: settings.profile, calibration: calibrator.factor });
  const view = await settings.store.loadContext();
  // The loaded rows are not held past this: the compaction works on segments, and a few hundred rows kept alive
  // while it runs are copied by every collection of the young generation it causes.
  const loaded = loadSegmentsFrom(view, {
    measure,
    policy: settings.policy,
    convertToolOutput: options.convertToolOutput,
    convertDataPart: options.convertDataPart,
    availableTools: options.availableTools,
    window: whole ? undefined : contextWindowSize(options, settings),
    cache: settings.store.messageCache,
    state,
  });
  const carry = (segments: readonly ContextSegment[]) => {
    const carried = carryFrom(view.snapshot, segments, settings, measure);
    if (carried.compaction) recordCompaction(state, carried.compaction);
    return carried;
  };
  const carried = carry(loaded.segments);
  const { window } = loaded;
  const { segments: final, report } = await compact({
    trigger: 'initial-messages',
    stepNumber: null,
    segments: carried.segments,
    original: loaded.segments,
    stages: [...loaded.stages, carried.report],
    instructions,
    observation: { observedInputTokens: null, estimatedInputTokens: null },
    started,
    memory: true,
    window: window && {
      ...window,
      whole: () => {
        const whole = window.whole();
        // The window's carry is recorded: the whole thread's takes its place (the two may differ, a dropped round
        // whose call id only the older turns reuse is carried in the window alone).
        forgetCompactions(state);
        const wholeCarried = carry(whole.segments);
        return { ...whole, segments: wholeCarried.segments, stages: [...whole.stages, wholeCarried.report] };
      },
    },
  });
  emit(report);
  return { final, report, loaded: loaded.segments };
}

function loadSegmentsFrom(
  view: LoadedContext,
  { state, ...options }: Omit<LoadContextSegmentsOptions, 'view'> & { state: ContextEngineState },
): LoadedContextSegments {
  recordLoadedContext(state, view);
  return loadContextSegments({ view, ...options });
}

/**
 * `prepareStep` without `initialMessages()`: the thread is loaded and built as `initialMessages()` builds it
 * (pinned messages, summary, snapshot), and the step's messages the store does not hold ({@link unstoredTail})
 * are kept after it, but for results and approval responses whose call or request the context left out. A thread with nothing stored keeps the step's messages as they are.
 */
export async function adoptThread(
  internals: EngineInternals,
  messages: ModelMessage[],
  instructions: ContextInstructions | undefined,
): Promise<ModelMessage[]> {
  try {
    // The whole thread: the step's messages are matched against every stored one.
    const { final, loaded } = await buildInitial(internals, instructions, true);
    const context = renderSegments(final);
    return [...context, ...withoutOrphanedAnswers(context, unstoredTail(messages, loaded))];
  } catch (error) {
    if (error instanceof ContextEmptyError) return messages;
    throw error;
  }
}

/**
 * How much of the thread `initialMessages()` starts from: the newest turns whose pruned size (estimated from the
 * stored per-part counts) exceeds the most input the model takes — the selection sets turns aside only from a
 * context over the budget — and {@link WINDOW_MARGIN_TURNS} more. None with a summarizer (it reads every turn set
 * aside) or a custom conversion (stored counts are not used with it).
 */
export function contextWindowSize(
  options: Pick<CreateContextEngineOptions, 'summarizer' | 'convertToolOutput' | 'convertDataPart' | '_internal'>,
  settings: Pick<ContextEngineSettings, 'profile' | 'maxInputTokens' | 'maxOutputTokens' | 'policy'>,
): ContextWindowSize | undefined {
  if (options.summarizer || options.convertToolOutput || options.convertDataPart) return undefined;
  if (options._internal?.wholeThread) return undefined;
  const { profile, policy } = settings;
  const windowCeiling =
    profile.contextWindow -
    (settings.maxOutputTokens ?? profile.maxOutputTokens) -
    Math.ceil(profile.contextWindow * profile.safetyMarginRatio);
  const { reasoningTurns, toolTrafficTurns } = policy.prune;
  return {
    inputTokens: Math.min(windowCeiling, settings.maxInputTokens ?? Number.POSITIVE_INFINITY),
    minimumTurns: Math.max(reasoningTurns, toolTrafficTurns) + 2,
    targetRatio: policy.summary.targetRatio,
    marginTurns: WINDOW_MARGIN_TURNS,
    prune: policy.prune,
    previewTokens: policy.toolOutputPreview.minimumTokens,
    assistantStatuses: policy.assistantStatuses,
  };
}

/**
 * Turns a window takes past the budget: a turn that does not fit whole may still be kept shrunk (previews), and
 * then the next one is tried. Measured on generated conversations (BENCHMARKS.md, W7).
 */
const WINDOW_MARGIN_TURNS = 1;

/** What identifies a message between the caller's conversion and the store's ({@link pairs}). */
interface MessageIdentity {
  role: ModelMessage['role'];
  /** The ids of its tool calls and results. */
  toolIds: string[];
  /** Its texts and reasoning. */
  texts: string;
}

function identityOf({ role, content }: ModelMessage): MessageIdentity {
  const toolIds: string[] = [];
  const texts: string[] = [];
  if (typeof content === 'string') texts.push(content);
  else
    for (const part of content)
      if (part.type === 'text' || part.type === 'reasoning') texts.push(part.type, part.text);
      else if (part.type === 'tool-call' || part.type === 'tool-result') toolIds.push(part.toolCallId);
  return { role, toolIds, texts: JSON.stringify(texts) };
}

// Whether a caller's message is the conversion of a stored one: the same role and, with tool calls or results, one
// of them in common (the two conversions may differ in the rest: the store closes an unfinished call the caller's
// drops, renders a denial as a result rather than an approval response, a file's URL as a text); without, the same
// texts.
function pairs(given: MessageIdentity, stored: MessageIdentity): boolean {
  if (given.role !== stored.role) return false;
  if (given.toolIds.length === 0 && stored.toolIds.length === 0) return given.texts === stored.texts;
  return given.toolIds.some((id) => stored.toolIds.includes(id));
}

/**
 * The messages of a step that the store does not hold yet, when `prepareStep` runs without `initialMessages()`:
 * the store is the record, so the caller's copy of the thread is replaced by the context built from it, and only
 * what comes after the last message that pairs with a stored one ({@link pairs}) is kept (this request's steps, or
 * an input the app has not stored). Messages pair in order, as the longest alignment of the two
 * ({@link lastAlignedIndex}): a message the store renders otherwise pairs with nothing and moves nothing, and a new
 * message that reads like an older one ("OK.") is still new.
 */
export function unstoredTail(messages: readonly ModelMessage[], loaded: readonly ContextSegment[]): ModelMessage[] {
  const stored: MessageIdentity[] = [];
  for (const segment of loaded)
    if (segment.kind === 'message' && segment.sequence !== null)
      for (const message of segment.messages) stored.push(identityOf(message));
  const given = messages.map(identityOf);
  const lastMatch =
    lastAlignedIndex(given.length, stored.length, (x, y) => pairs(given[x]!, stored[y]!)) ??
    greedyLastMatch(given, stored);
  return messages.slice(lastMatch + 1);
}

// Pairs each message with the next stored one that reads the same: for messages too far from the store to align.
function greedyLastMatch(given: readonly MessageIdentity[], stored: readonly MessageIdentity[]): number {
  let next = 0;
  let lastMatch = -1;
  given.forEach((identity, index) => {
    const found = stored.findIndex((candidate, position) => position >= next && pairs(identity, candidate));
    if (found === -1) return;
    next = found + 1;
    lastMatch = index;
  });
  return lastMatch;
}
