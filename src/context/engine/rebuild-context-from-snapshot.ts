import type { ModelMessage } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { createContextMeasure } from '../../tokens/context-measure.js';
import { resolveContextPolicy, type ContextPolicyInput } from '../contracts/context-policy.js';
import { renderSegments, type ContextSegment } from '../segments/context-segment.js';
import { readSnapshotPruning } from './context-snapshot-pruning.js';
import type { ContextMessage, ContextSnapshot, ContextSummary } from '../../model/context-store.js';
import { convertToContextSegments } from '../stages/convert-to-context-segments.js';
import type { ConvertUIMessageOptions } from '../../tokens/convert-ui-message.js';
import { filterStoredMessages } from '../stages/filter-stored-messages.js';
import { hashContextMessages } from './hash-context-messages.js';
import { createMemorySegment } from '../segments/memory-segment.js';
import { resolveModelProfile } from '../../tokens/model-profile.js';
import { applyContextPruning } from '../stages/apply-context-pruning.js';
import { createSummarySegment } from '../segments/summary-segment.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { applyToolOutputPreviews } from '../stages/apply-tool-output-previews.js';
import { applyRecordedShrinks } from '../stages/shrink-newest-turn.js';
import { validateStoredMessages } from '../stages/validate-stored-messages.js';
import { rebuildMemorySegments, type SnapshotMemoryInput } from './rebuild-memory-segments.js';

/** Options of {@link rebuildContextFromSnapshot}. */
export interface RebuildContextFromSnapshotOptions extends ConvertUIMessageOptions {
  /** The snapshot to rebuild. */
  snapshot: ContextSnapshot;
  /** The snapshot's summary (its `summaryId`), or null when it has none. */
  summary: ContextSummary | null;
  /** Stored messages: at least the snapshot's included and memory sequences (more are ignored). */
  messages: readonly ContextMessage[];
  /** The counter (previews are cut by tokens, so it must be the one that built the context). */
  tokenCounter: TokenCounter;
  /** The policy the context was built with (statuses, memory sizes). */
  policy?: ContextPolicyInput;
  /**
   * The working memory and recalled items the snapshot's context held (it records their ids and versions): at least
   * those (more are ignored), at those versions, or it throws `InvalidArgumentError`. @default none
   */
  memory?: SnapshotMemoryInput;
}

/**
 * Rebuilds the stored part of a context from a snapshot and the log (seed 004): the working memory and recalled
 * items (from `memory`), the summary message, the memory message, and the included messages with the recorded pruning, trimmed reasoning, previews and dropped
 * rounds applied, through the same stage functions that built it. `hash` equals the snapshot's `messagesHash` as long as the log and summary are
 * unchanged (a redaction makes the store mark the snapshot stale).
 */
export function rebuildContextFromSnapshot({
  snapshot,
  summary,
  messages,
  tokenCounter,
  policy: policyInput,
  memory,
  ...conversion
}: RebuildContextFromSnapshotOptions): { messages: ModelMessage[]; hash: string; matches: boolean } {
  if (snapshot.summaryId !== null && summary?.id !== snapshot.summaryId) {
    throw new InvalidArgumentError({
      argument: 'summary',
      value: summary?.id ?? null,
      message: `expected the snapshot's summary ${JSON.stringify(snapshot.summaryId)}.`,
    });
  }
  const policy = resolveContextPolicy(policyInput);
  const pruning = readSnapshotPruning(snapshot.pruned);
  const measure = createContextMeasure({ tokenCounter, profile: resolveModelProfile({ modelId: 'gpt-4o' }) });
  const included = new Set(snapshot.includedSequences);
  const bySequence = new Map(messages.map((message) => [message.sequence, message]));
  const validated = validateStoredMessages({ messages: messages.filter((message) => included.has(message.sequence)) });
  const filtered = filterStoredMessages({ messages: validated.messages, assistantStatuses: policy.assistantStatuses });
  const converted = convertToContextSegments({ messages: filtered.messages, measure, ...conversion });
  const segments: ContextSegment[] = rebuildMemorySegments({ pruning, memory, measure });
  if (snapshot.summaryId !== null && summary) segments.push(createSummarySegment({ summary, measure }));
  if (pruning.memorySequences.length > 0) {
    const quoted = pruning.memorySequences
      .map((sequence) => bySequence.get(sequence))
      .filter((message): message is ContextMessage => message !== undefined);
    const memory = createMemorySegment({
      messages: quoted,
      measure,
      maxTokens: policy.memory.maxTokens,
      messageCharacters: policy.memory.messageCharacters,
    });
    if (memory) segments.push(memory);
  }
  segments.push(...converted.segments);
  const reasoning = new Set(pruning.reasoningSequences);
  const pruned = applyContextPruning({
    segments,
    measure,
    reasoningFrom: (segment) => segment.sequence !== null && reasoning.has(segment.sequence),
    toolCallIds: new Set(pruning.toolCallIds),
    emptyMessages: pruning.emptyMessages,
  });
  const shrunk = applyRecordedShrinks(pruned.segments, measure, pruning.trimmedReasoning, []);
  const previewed = applyToolOutputPreviews({ segments: shrunk, previews: pruning.previews, measure });
  const trimmed = applyRecordedShrinks(previewed.segments, measure, [], pruning.droppedRounds);
  const result = renderSegments(trimmed);
  const hash = hashContextMessages(result);
  return { messages: result, hash, matches: hash === snapshot.messagesHash };
}
