import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextPolicy } from '../contracts/context-policy.js';
import type { MemoryStageReport } from '../contracts/stage-reports.js';
import {
  findCurrentInputIndex,
  renderSegments,
  type ContextSegment,
  type MemorySegment,
} from '../segments/context-segment.js';
import type { ContextStore } from '../../model/context-store.js';
import { filterStoredMessages } from './filter-stored-messages.js';
import { createMemorySegment } from '../segments/memory-segment.js';
import { validateStoredMessages } from './validate-stored-messages.js';

/** Options of {@link findRelevantMemory}. */
export interface FindRelevantMemoryOptions {
  /** Searched with `searchMessages`, when it has it. */
  store: ContextStore;
  /** The selected context: its current input is the query, its messages are not quoted again. */
  segments: readonly ContextSegment[];
  /** Counts the memory message. */
  measure: ContextMeasure;
  /** `policy.memory` and the assistant statuses. */
  policy: Pick<ContextPolicy, 'memory' | 'assistantStatuses'>;
}

/**
 * The memory step of stage 6: asks the store's search with the current input's text (first 500 characters)
 * and quotes the eligible messages found that are not in the context already (typically older than the
 * summary boundary) in one `user` message ({@link createMemorySegment}).
 */
export async function findRelevantMemory({
  store,
  segments,
  measure,
  policy,
}: FindRelevantMemoryOptions): Promise<{ segment: MemorySegment | null; report: MemoryStageReport }> {
  const empty = (status: MemoryStageReport['status']): { segment: null; report: MemoryStageReport } => ({
    segment: null,
    report: { stage: 'memory', status, sequences: [], removed: [], tokensSaved: 0 },
  });
  if (policy.memory.mode === 'off') return empty('off');
  if (!store.searchMessages) return empty('unavailable');
  const query = currentInputQuery(segments);
  if (query === '') return empty('none');
  const present = new Set(
    segments.flatMap((segment) => (segment.kind === 'message' && segment.sequence !== null ? [segment.sequence] : [])),
  );
  const found = await store.searchMessages({ query, limit: policy.memory.limit });
  const validated = validateStoredMessages({
    messages: found.filter((message) => !present.has(message.sequence)),
  }).messages;
  const eligible = filterStoredMessages({ messages: validated, assistantStatuses: policy.assistantStatuses }).messages;
  const segment = createMemorySegment({
    messages: eligible,
    measure,
    maxTokens: policy.memory.maxTokens,
    messageCharacters: policy.memory.messageCharacters,
  });
  if (!segment) return empty('none');
  return {
    segment,
    report: { stage: 'memory', status: 'found', sequences: segment.sequences, removed: [], tokensSaved: 0 },
  };
}

/** The query memory is looked up with: the current input's text (its first 500 characters), or '' without one. */
export function currentInputQuery(segments: readonly ContextSegment[]): string {
  const current = segments[findCurrentInputIndex(segments)];
  if (!current) return '';
  return renderSegments([current])
    .flatMap((message) =>
      typeof message.content === 'string'
        ? [message.content]
        : message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])),
    )
    .join(' ')
    .slice(0, 500)
    .trim();
}
