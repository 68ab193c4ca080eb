import type { ModelMessage } from 'ai';
import type { ContextCalibrator } from '../../tokens/context-calibrator.js';
import { createContextMeasure } from '../../tokens/context-measure.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { withoutContextMessageRef } from '../segments/context-message-ref.js';
import { renderSegments, type ContextSegment } from '../segments/context-segment.js';
import { canonicalJson } from './canonical-json.js';
import type { CompactContextOptions, ContextEngineSettings } from './compact-context.js';
import { ContextEmptyError } from './context-empty-error.js';
import { recordLoadedContext, type ContextEngineState } from './context-engine-state.js';
import type { CreateContextEngineOptions } from './context-engine.js';
import type { ContextReport } from './context-report.js';
import type { ContextInstructions } from './estimate-prompt-overhead.js';
import { loadContextSegments } from './load-context-segments.js';

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
 * before the compaction.
 */
export async function buildInitial(
  { options, settings, state, calibrator, resources, compact, emit }: EngineInternals,
  instructions: ContextInstructions | undefined,
): Promise<{ final: ContextSegment[]; report: ContextReport; loaded: ContextSegment[] }> {
  const started = settings.now();
  const { tokenCounter } = await resources();
  const view = await settings.store.loadContext();
  recordLoadedContext(state, view);
  const loaded = loadContextSegments({
    view,
    measure: createContextMeasure({ tokenCounter, profile: settings.profile, calibration: calibrator.factor }),
    policy: settings.policy,
    convertToolOutput: options.convertToolOutput,
    convertDataPart: options.convertDataPart,
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
  });
  emit(report);
  return { final, report, loaded: loaded.segments };
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
    const { final, loaded } = await buildInitial(internals, instructions);
    return [...renderSegments(final), ...unstoredTail(messages, loaded)];
  } catch (error) {
    if (error instanceof ContextEmptyError) return messages;
    throw error;
  }
}

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
 * what comes after the newest stored message is kept (this request's steps, or an input the app has not stored).
 * The newest stored message is found by its content (the caller converted it from the same UI message); when the
 * step does not hold it, the trailing messages that match no loaded message are kept.
 */
export function unstoredTail(messages: readonly ModelMessage[], loaded: readonly ContextSegment[]): ModelMessage[] {
  const stored = loaded.filter((segment) => segment.kind === 'message' && segment.sequence !== null);
  const newest = stored.at(-1)?.messages.at(-1);
  if (!newest) return [...messages];
  const newestKey = contentKey(newest);
  for (let index = messages.length - 1; index >= 0; index--)
    if (contentKey(messages[index]!) === newestKey) return messages.slice(index + 1);
  const keys = new Set(stored.flatMap((segment) => segment.messages.map(contentKey)));
  let start = messages.length;
  while (start > 0 && !keys.has(contentKey(messages[start - 1]!))) start -= 1;
  return messages.slice(start);
}
