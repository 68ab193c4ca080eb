import type { LoadedContext, ContextMessage, ContextMessageCache } from '../../model/context-store.js';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ConvertUIMessageOptions } from '../../tokens/convert-ui-message.js';
import type { ContextSegment } from '../segments/context-segment.js';
import { createSummarySegment } from '../segments/summary-segment.js';
import { convertToContextSegments } from '../stages/convert-to-context-segments.js';
import { filterStoredMessages } from '../stages/filter-stored-messages.js';
import { validateStoredMessages } from '../stages/validate-stored-messages.js';
import { ContextEmptyError } from '../contracts/context-empty-error.js';
import { findWindowStart, windowMessages, type ContextWindowSize } from './context-window.js';
import type { ContextPolicy } from '../contracts/context-policy.js';
import type { ContextStageReport } from '../contracts/context-report.js';
import { windowOutsideTokens } from './window-outside-tokens.js';
import { shortensTextBefore } from './context-snapshot-pruning.js';
import { withRowLookups } from '../caches/cached-row.js';
import { isToolUIPart, type ContextUIPart } from '../../model/context-ui-message.js';

/** Options of {@link loadContextSegments}. */
export interface LoadContextSegmentsOptions extends ConvertUIMessageOptions {
  /** What the store loaded. */
  view: LoadedContext;
  /** Counts the converted messages. */
  measure: ContextMeasure;
  /** The assistant statuses to keep. */
  policy: Pick<ContextPolicy, 'assistantStatuses'>;
  /**
   * Start from the newest turns only ({@link findWindowStart}); the result then says where the window starts
   * and how to load the whole thread. @default the whole thread
   */
  window?: ContextWindowSize;
  /** The store's cache of converted messages (`ContextStore.messageCache`). @default none */
  cache?: ContextMessageCache;
}

/** What {@link loadContextSegments} built. */
export interface LoadedContextSegments {
  /** The summary (unless stale), then the converted messages, in order. */
  segments: ContextSegment[];
  /** The reports of stages 1 to 4. */
  stages: ContextStageReport[];
  /**
   * With a window that left older turns out: the sequence of its first message, the least and the most those turns
   * add to the estimate ({@link windowOutsideTokens}), and the whole thread's segments.
   */
  window?: {
    firstSequence: number;
    outsideTokens: number;
    outsideTokensAtMost: number;
    whole: () => LoadedContextSegments;
  };
}

/**
 * Stages 1 to 4 over a loaded thread: the summary (unless stale), then the pinned messages and the tail after
 * the summary's boundary, validated, filtered and converted into segments.
 * @throws {ContextEmptyError} when no message is left.
 */
export function loadContextSegments(options: LoadContextSegmentsOptions): LoadedContextSegments {
  return withRowLookups(options.cache, () => loadSegments(options));
}

function loadSegments(options: LoadContextSegmentsOptions): LoadedContextSegments {
  const { view, window } = options;
  const summary = view.latestSummary && !view.latestSummary.stale ? view.latestSummary : null;
  // One row per sequence, the tail's when both lists hold it (a stable sort keeps the pinned one first). A sort puts
  // equal sequences together only when they compare: a store's garbage (NaN) takes a map, as its keys compare.
  const merged = [...view.pinned, ...view.tail];
  const integers = merged.every((message) => Number.isSafeInteger(message.sequence));
  const rows = integers ? merged.sort(bySequence) : [...new Map(merged.map((row) => [row.sequence, row])).values()];
  const boundary = summary?.throughSequence ?? 0;
  const candidates: ContextMessage[] = [];
  let loadedMessages = 0;
  for (let index = 0; index < rows.length; index++) {
    const message = rows[index]!;
    if (integers && index + 1 < rows.length && rows[index + 1]!.sequence === message.sequence) continue;
    loadedMessages += 1;
    if (message.pinned === true || message.sequence > boundary) candidates.push(message);
  }
  if (!integers) candidates.sort(bySequence);
  const load = (messages: readonly ContextMessage[]) => segmentsOf(options, messages, summary, loadedMessages);
  const start = window ? findWindowStart(candidates, window, options.cache) : 0;
  if (start === 0) return load(candidates);
  let windowed: LoadedContextSegments;
  const inWindow = windowMessages(candidates, start);
  try {
    windowed = load(inWindow);
  } catch (error) {
    // Nothing in the window reaches the model (all deleted or excluded): the older turns may.
    if (error instanceof ContextEmptyError) return load(candidates);
    throw error;
  }
  const outside = windowOutsideTokens({
    messages: candidates.slice(0, start).filter((message) => message.pinned !== true),
    measure: options.measure,
    assistantStatuses: options.policy.assistantStatuses,
    limit: window!.inputTokens,
    pruneToolTraffic: window!.prune.toolTraffic !== 'none',
    windowToolCallIds: toolCallIdsOf(inWindow),
    cache: options.cache,
  });
  const firstSequence = candidates[start]!.sequence;
  const whole = () => withRowLookups(options.cache, () => load(candidates));
  // The snapshot's cut, carried into the whole thread, may shorten texts the least counts as sent whole.
  const shortened = view.snapshot != null && shortensTextBefore(view.snapshot.pruned, firstSequence);
  const outsideTokens = shortened ? 0 : outside.least;
  return { ...windowed, window: { firstSequence, outsideTokens, outsideTokensAtMost: outside.most, whole } };
}

// The tool call ids of the messages' tool parts (unvalidated rows: a part that is not one is passed over).
function toolCallIdsOf(messages: readonly ContextMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const { message } of messages)
    if (Array.isArray(message?.parts))
      for (const part of message.parts as unknown[])
        if (typeof (part as { type?: unknown })?.type === 'string' && isToolUIPart(part as ContextUIPart))
          ids.add(String((part as ContextUIPart).toolCallId));
  return ids;
}

function bySequence(a: ContextMessage, b: ContextMessage): number {
  return a.sequence - b.sequence;
}

function segmentsOf(
  { measure, policy, convertToolOutput, convertDataPart, availableTools, cache }: LoadContextSegmentsOptions,
  candidates: readonly ContextMessage[],
  summary: LoadedContext['latestSummary'],
  loadedMessages: number,
): LoadedContextSegments {
  const validated = validateStoredMessages({ messages: candidates, cache });
  // A row that no longer reaches the model (redacted, deleted, excluded) leaves the cache.
  if (cache)
    for (const stored of validated.messages)
      if (typeof stored.rowId === 'string' && (stored.deletedAt != null || stored.contextState !== 'eligible'))
        cache.delete(stored.rowId);
  const filtered = filterStoredMessages({ messages: validated.messages, assistantStatuses: policy.assistantStatuses });
  const converted = convertToContextSegments({
    messages: filtered.messages,
    measure,
    convertToolOutput,
    convertDataPart,
    availableTools,
    cache,
  });
  if (converted.segments.length === 0) throw new ContextEmptyError({ loadedMessages });
  const segments: ContextSegment[] = [];
  if (summary) segments.push(createSummarySegment({ summary, measure }));
  segments.push(...converted.segments);
  return { segments, stages: [validated.report, filtered.report, converted.report] };
}
