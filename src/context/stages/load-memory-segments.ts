import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextRecalledItem, ContextStore } from '../../model/context-store.js';
import type { ContextPolicy } from '../contracts/context-policy.js';
import type { MemorySegmentEntry } from '../contracts/stage-reports.js';
import type { ContextSegment } from '../segments/context-segment.js';
import { createRecalledSegment } from '../segments/recalled-segment.js';
import { createWorkingMemorySegment } from '../segments/working-memory-segment.js';
import { currentInputQuery } from './find-relevant-memory.js';
import {
  entryOf,
  orderMemorySegments,
  type LoadedMemorySegments,
  type MemoryItemSegment,
} from './fit-memory-segments.js';

export type { LoadedMemorySegments };

/** Options of {@link loadMemorySegments}. */
export interface LoadMemorySegmentsOptions {
  /** Asked with `loadMemory`, when it has it. */
  store: Pick<ContextStore, 'loadMemory'>;
  /** The context: its current input is the query. */
  segments: readonly ContextSegment[];
  /** Counts the memory messages. */
  measure: ContextMeasure;
  /** `policy.memory`: the working memory and recall settings. */
  policy: Pick<ContextPolicy, 'memory'>;
}

/**
 * Asks the store's `loadMemory` with the current input's text and makes a segment of the working memory (unless
 * `memory.workingMemory` is `off`) and of each recalled item with text (unless `memory.recall.mode` is `off`),
 * best first, up to `memory.recall.maxTokens` for all of them together. Null when the store has no `loadMemory` or
 * the policy turns both off.
 */
export async function loadMemorySegments({
  store,
  segments,
  measure,
  policy,
}: LoadMemorySegmentsOptions): Promise<LoadedMemorySegments | null> {
  const { workingMemory, recall } = policy.memory;
  if (!store.loadMemory || (workingMemory === 'off' && recall.mode === 'off')) return null;
  // With recall off the store is asked for no items (the Postgres store then runs no recall query).
  const loaded = await store.loadMemory({
    query: currentInputQuery(segments),
    limit: recall.mode === 'off' ? 0 : recall.limit,
  });
  const memory: MemoryItemSegment[] = [];
  if (workingMemory === 'include' && loaded.workingMemory)
    memory.push(createWorkingMemorySegment({ workingMemory: loaded.workingMemory, measure }));
  const items = recall.mode === 'off' ? [] : loaded.recalled.filter(usable).slice(0, recall.limit);
  const recalled = orderMemorySegments(items.map((item) => createRecalledSegment({ item, measure })));
  const leftOut: MemorySegmentEntry[] = [];
  let left = recall.maxTokens;
  for (const segment of recalled) {
    const entry = entryOf(segment, measure);
    if (leftOut.length === 0 && entry.tokens <= left) {
      left -= entry.tokens;
      memory.push(segment);
    } else leftOut.push({ ...entry, included: false });
  }
  return { memory, leftOut, recall: loaded.recall === 'hybrid' ? 'hybrid' : 'full-text' };
}

// An item the model can read: a user's or an assistant's text.
function usable(item: ContextRecalledItem): boolean {
  return (
    (item.role === 'user' || item.role === 'assistant') &&
    typeof item.text === 'string' &&
    item.text.trim() !== '' &&
    typeof item.id === 'string' &&
    Number.isFinite(item.score)
  );
}
