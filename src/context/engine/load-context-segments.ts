import type { LoadedContext, ContextMessage } from '../../model/context-store.js';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ConvertUIMessageOptions } from '../../tokens/convert-ui-message.js';
import type { ContextSegment } from '../segments/context-segment.js';
import { createSummarySegment } from '../segments/summary-segment.js';
import { convertToContextSegments } from '../stages/convert-to-context-segments.js';
import { filterStoredMessages } from '../stages/filter-stored-messages.js';
import { validateStoredMessages } from '../stages/validate-stored-messages.js';
import { ContextEmptyError } from './context-empty-error.js';
import type { ContextPolicy } from './context-policy.js';
import type { ContextStageReport } from './context-report.js';

/** Options of {@link loadContextSegments}. */
export interface LoadContextSegmentsOptions extends ConvertUIMessageOptions {
  /** What the store loaded. */
  view: LoadedContext;
  /** Counts the converted messages. */
  measure: ContextMeasure;
  /** The assistant statuses to keep. */
  policy: Pick<ContextPolicy, 'assistantStatuses'>;
}

/**
 * Stages 1 to 4 over a loaded thread: the summary (unless stale), then the pinned messages and the tail after
 * the summary's boundary, validated, filtered and converted into segments.
 * @throws {ContextEmptyError} when no message is left.
 */
export function loadContextSegments({
  view,
  measure,
  policy,
  convertToolOutput,
  convertDataPart,
}: LoadContextSegmentsOptions): { segments: ContextSegment[]; stages: ContextStageReport[] } {
  const summary = view.latestSummary && !view.latestSummary.stale ? view.latestSummary : null;
  const bySequence = new Map<number, ContextMessage>();
  for (const message of [...view.pinned, ...view.tail]) bySequence.set(message.sequence, message);
  const candidates = [...bySequence.values()]
    .sort((a, b) => a.sequence - b.sequence)
    .filter((message) => message.pinned === true || message.sequence > (summary?.throughSequence ?? 0));
  const validated = validateStoredMessages({ messages: candidates });
  const filtered = filterStoredMessages({ messages: validated.messages, assistantStatuses: policy.assistantStatuses });
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
  return { segments, stages: [validated.report, filtered.report, converted.report] };
}
