import type { ModelMessage } from 'ai';
import type { ContextCalibrator } from '../../tokens/context-calibrator.js';
import { createContextMeasure } from '../../tokens/context-measure.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { withoutContextMessageRef } from '../segments/context-message-ref.js';
import { renderSegments, type ContextSegment } from '../segments/context-segment.js';
import { canonicalJson } from './canonical-json.js';
import type { CompactContextOptions, ContextEngineSettings } from './compact-context-options.js';
import { ContextEmptyError } from '../contracts/context-empty-error.js';
import { recordLoadedContext, type ContextEngineState } from './context-engine-state.js';
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
  // The loaded rows are not held past this: the compaction works on segments, and a few hundred rows kept alive
  // while it runs are copied by every collection of the young generation it causes.
  const loaded = loadSegmentsFrom(await settings.store.loadContext(), {
    measure: createContextMeasure({ tokenCounter, profile: settings.profile, calibration: calibrator.factor }),
    policy: settings.policy,
    convertToolOutput: options.convertToolOutput,
    convertDataPart: options.convertDataPart,
    availableTools: options.availableTools,
    window: whole ? undefined : contextWindowSize(options, settings),
    cache: settings.store.messageCache,
    state,
  });
  const { segments: final, report } = await compact({
    trigger: 'initial-messages',
    stepNumber: null,
    segments: loaded.segments,
    stages: loaded.stages,
    instructions,
    observation: { observedInputTokens: null, estimatedInputTokens: null },
    started,
    memory: true,
    window: loaded.window,
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
 * are kept after it. A thread with nothing stored keeps the step's messages as they are.
 */
export async function adoptThread(
  internals: EngineInternals,
  messages: ModelMessage[],
  instructions: ContextInstructions | undefined,
): Promise<ModelMessage[]> {
  try {
    // The whole thread: the step's messages are matched against every stored one.
    const { final, loaded } = await buildInitial(internals, instructions, true);
    return [...renderSegments(final), ...unstoredTail(messages, loaded)];
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

// A message's content as a comparable text: role and parts, without provider options (the caller's conversion
// may carry other ones) and without the engine's reference.
function contentKey(message: ModelMessage): string {
  const { role, content } = withoutContextMessageRef(message);
  const parts =
    typeof content === 'string'
      ? [{ type: 'text', text: content }]
      : content.map((part) => {
          const { providerOptions: _providerOptions, ...rest } = part as { providerOptions?: unknown };
          return rest;
        });
  return canonicalJson({ role, content: parts });
}

/**
 * The messages of a step that the store does not hold yet, when `prepareStep` runs without `initialMessages()`:
 * the store is the record, so the caller's copy of the thread is replaced by the context built from it, and only
 * what comes after the last message that matches a stored one is kept (this request's steps, or an input the app
 * has not stored). Messages match by content (the caller converted them from the same UI messages), in order: each
 * must match a stored message after the previous match, so a new message that reads like an older one ("OK.") is
 * still new.
 */
export function unstoredTail(messages: readonly ModelMessage[], loaded: readonly ContextSegment[]): ModelMessage[] {
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const segment of loaded)
    if (segment.kind === 'message' && segment.sequence !== null)
      for (const message of segment.messages) {
        const key = contentKey(message);
        const list = positions.get(key);
        if (list) list.push(position++);
        else positions.set(key, [position++]);
      }
  let next = 0;
  let lastMatch = -1;
  messages.forEach((message, index) => {
    const found = positions.get(contentKey(message))?.find((candidate) => candidate >= next);
    if (found === undefined) return;
    next = found + 1;
    lastMatch = index;
  });
  return messages.slice(lastMatch + 1);
}
