import type { ModelMessage } from 'ai';
import type { ContextSnapshot } from '../../model/context-store.js';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import {
  estimateSegments,
  findCurrentInputIndex,
  type ContextSegment,
  type SummarySegment,
} from '../segments/context-segment.js';
import { applyContextPruning } from '../stages/apply-context-pruning.js';
import { applyToolOutputPreviews } from '../stages/apply-tool-output-previews.js';
import { memoizedContentKey } from '../stages/preview-candidates.js';
import { applyRecordedShrinks, roundKey, type DroppedRound } from '../stages/shrink-newest-turn.js';
import type { CarryStageReport } from '../contracts/stage-reports.js';
import type { ContextCompaction } from './context-engine-state.js';
import type { ContextEngineSettings } from './compact-context-options.js';
import { readSnapshotPruning } from './context-snapshot-pruning.js';

/** The limits a snapshot's budget must share with the request for its cut to be carried. */
export interface BudgetLimits {
  /** The model's context window. */
  contextWindow: number;
  /** The output reserve. */
  maxOutputTokens: number;
  /** The caller's cap on the whole input, or null. */
  maxInputTokens: number | null;
}

/** Options of {@link carryPreviousCut}. */
export interface CarryPreviousCutOptions {
  /** The loaded context: the summary, pinned messages and the tail, converted. */
  segments: readonly ContextSegment[];
  /** The snapshot the load returned, or null. */
  snapshot: ContextSnapshot | null;
  /** Counts the changed messages. */
  measure: ContextMeasure;
  /** The policy version in force. */
  policyVersion: string;
  /**
   * Whether the policy in force removes messages left empty (`policy.prune.emptyMessages`). @default 'remove'
   */
  emptyMessages?: 'remove' | 'keep';
  /** The request's budget limits. */
  limits: BudgetLimits;
}

/** What {@link carryPreviousCut} made. */
export interface CarriedCut {
  /** The context with the previous cut applied (the loaded one when nothing was carried). */
  segments: ContextSegment[];
  /** What was applied, for the pruning record (null when nothing was carried). */
  compaction: ContextCompaction | null;
  /** The stage's report. */
  report: CarryStageReport;
}

/**
 * Starts a request from where the previous one left the context: the reasoning, tool traffic, trims and previews
 * the newest snapshot records are applied again to the loaded context, through the functions a snapshot rebuild
 * uses. A request that then fits its budget sends what the previous request sent with the new messages after it
 * (the prefix a provider's prompt cache holds), and the stages compact again only once it does not. Carried only from
 * a snapshot of the same policy version, summary and budget limits; what changed in the log since (an excluded or
 * edited message) is as loaded. Turns the snapshot records as trimmed are not left out: with a summarizer they wait to
 * be summarized (without one, trims move the snapshot's boundary past them, so they are not loaded).
 */
export function carryPreviousCut({
  segments,
  snapshot,
  measure,
  policyVersion,
  emptyMessages = 'remove',
  limits,
}: CarryPreviousCutOptions): CarriedCut {
  const notCarried = (reason: CarryStageReport['carried']): CarriedCut => ({
    segments: [...segments],
    compaction: null,
    report: {
      stage: 'carry',
      carried: reason,
      snapshotVersion: snapshot?.version ?? null,
      removed: [],
      tokensSaved: 0,
    },
  });
  if (!snapshot) return notCarried('no-snapshot');
  if (snapshot.policyVersion !== policyVersion) return notCarried('policy-changed');
  const summary = segments.find((segment): segment is SummarySegment => segment.kind === 'summary');
  if ((summary?.summaryId ?? null) !== snapshot.summaryId) return notCarried('summary-changed');
  if (!sameLimits(snapshot.budget, limits)) return notCarried('budget-changed');

  const recorded = readSnapshotPruning(snapshot.pruned);
  // A record made under another `emptyMessages` (or without one: it reads as 'remove') would apply it to every
  // segment, the newest turn and pinned messages too, and a snapshot written after records the policy's.
  if (recorded.emptyMessages !== emptyMessages) return notCarried('policy-changed');
  const withContent = recorded.previews.some((preview) => preview.part === 'content');
  // Pinned messages and the newest turn are never changed by a record: only the turns the previous request sent
  // before its own input (a snapshot of another writer, or of an older engine, may name anything).
  const currentInput = findCurrentInputIndex(segments);
  const guarded = presentKeys(
    segments.filter((segment, index) => index >= currentInput || (segment.kind === 'message' && segment.pinned)),
    withContent,
  );
  const open = (key: string) => !guarded.has(key);
  const reasoning = new Set(recorded.reasoningSequences.filter((sequence) => open(`sequence:${sequence}`)));
  const pruned = applyContextPruning({
    segments,
    measure,
    reasoningFrom: (segment) => segment.sequence !== null && reasoning.has(segment.sequence),
    toolCallIds: new Set(recorded.toolCallIds.filter((id) => open(`call:${id}`))),
    emptyMessages: recorded.emptyMessages,
  });
  const present = presentKeys(pruned.segments, withContent);
  const applies = (key: string) => present.has(key) && open(key);
  // A preview the snapshot's request made of its own steps (not stored then) names no stored message.
  const previews = recorded.previews.filter((preview) => preview.sequence !== null && applies(previewKey(preview)));
  const trimmedReasoning = recorded.trimmedReasoning.filter((entry) => applies(`sequence:${entry.sequence}`));
  const droppedRounds = withoutSharedCalls(
    pruned.segments,
    recorded.droppedRounds.filter((round) => applies(`sequence:${round.sequence}`)),
  );
  const shrunk = applyRecordedShrinks(pruned.segments, measure, trimmedReasoning, []);
  const previewed = applyToolOutputPreviews({ segments: shrunk, previews, measure }).segments;
  const carried = applyRecordedShrinks(previewed, measure, [], droppedRounds);
  return {
    segments: carried,
    compaction: { pruning: pruned.pruning, previews, trimmedSequences: [], trimmedReasoning, droppedRounds },
    report: {
      stage: 'carry',
      carried: 'previous-cut',
      snapshotVersion: snapshot.version,
      removed: pruned.removed,
      tokensSaved: Math.max(0, estimateSegments(segments, measure) - estimateSegments(carried, measure)),
    },
  };
}

/** {@link carryPreviousCut} with an engine's settings, unless its policy starts every request from the thread. */
export function carryFrom(
  snapshot: ContextSnapshot | null,
  segments: readonly ContextSegment[],
  {
    policy,
    profile,
    maxOutputTokens,
    maxInputTokens,
  }: Pick<ContextEngineSettings, 'policy' | 'profile' | 'maxOutputTokens' | 'maxInputTokens'>,
  measure: ContextMeasure,
): CarriedCut {
  if (policy.summary.startFrom === 'thread')
    return {
      segments: [...segments],
      compaction: null,
      report: { stage: 'carry', carried: 'off', snapshotVersion: null, removed: [], tokensSaved: 0 },
    };
  return carryPreviousCut({
    segments,
    snapshot,
    measure,
    policyVersion: policy.version,
    emptyMessages: policy.prune.emptyMessages,
    limits: {
      contextWindow: profile.contextWindow,
      maxOutputTokens: maxOutputTokens ?? profile.maxOutputTokens,
      maxInputTokens: maxInputTokens ?? null,
    },
  });
}

// The snapshot's budget is stored JSON: read it defensively.
function sameLimits(budget: unknown, limits: BudgetLimits): boolean {
  if (typeof budget !== 'object' || budget === null) return false;
  const stored = budget as Partial<Record<keyof BudgetLimits, unknown>>;
  return (
    stored.contextWindow === limits.contextWindow &&
    stored.maxOutputTokens === limits.maxOutputTokens &&
    (stored.maxInputTokens ?? null) === limits.maxInputTokens
  );
}

type ContentPart = Exclude<ModelMessage['content'], string>[number];

// The keys a recorded preview or shrink can apply to in the context: its stored sequences, the ids of its tool calls
// and results, and the content keys of its parts.
function presentKeys(segments: readonly ContextSegment[], withContent: boolean): Set<string> {
  const keys = new Set<string>();
  for (const segment of segments) {
    if (segment.kind !== 'message') continue;
    if (segment.sequence !== null) keys.add(`sequence:${segment.sequence}`);
    for (const message of segment.messages) {
      if (typeof message.content === 'string') continue;
      for (const part of message.content as ContentPart[]) {
        if (part.type === 'tool-call' || part.type === 'tool-result') keys.add(`call:${part.toolCallId}`);
        // A content key hashes the part's text: made only when a content preview is recorded.
        const content = withContent ? memoizedContentKey(segment.sequence, part) : undefined;
        if (content !== undefined) keys.add(`content:${content}`);
      }
    }
  }
  return keys;
}

function previewKey(preview: { toolCallId: string; part?: 'input' | 'content' }): string {
  return preview.part === 'content' ? `content:${preview.toolCallId}` : `call:${preview.toolCallId}`;
}

/**
 * The dropped rounds whose tool calls are in no other round of the context. A rebuild prunes tool traffic before it
 * drops rounds, so a call id the stages prune later (a provider may reuse ids: the same id in an older message) would
 * change a carried round's key there, and the rebuild would keep the round the context left out.
 */
function withoutSharedCalls(segments: readonly ContextSegment[], rounds: readonly DroppedRound[]): DroppedRound[] {
  if (rounds.length === 0) return [];
  const roundsOf = new Map<string, Set<number>>();
  let round = -1;
  for (const segment of segments) {
    if (segment.kind !== 'message') continue;
    for (const message of segment.messages) {
      if (message.role === 'assistant') round += 1;
      else if (message.role !== 'tool') continue;
      if (typeof message.content === 'string') continue;
      for (const part of message.content as ContentPart[])
        if (part.type === 'tool-call' || part.type === 'tool-result') {
          const held = roundsOf.get(part.toolCallId);
          if (held) held.add(round);
          else roundsOf.set(part.toolCallId, new Set([round]));
        }
    }
  }
  const sequences = new Set(rounds.map((entry) => entry.sequence));
  const shared = new Set<string>();
  for (const segment of segments) {
    if (segment.kind !== 'message' || segment.sequence === null || !sequences.has(segment.sequence)) continue;
    for (const message of segment.messages) {
      if (message.role !== 'assistant' || typeof message.content === 'string') continue;
      const ids = (message.content as ContentPart[]).flatMap((part) =>
        part.type === 'tool-call' || part.type === 'tool-result' ? [part.toolCallId] : [],
      );
      if (ids.some((id) => (roundsOf.get(id)?.size ?? 0) > 1))
        shared.add(`${segment.sequence}\u0000${roundKey(message)}`);
    }
  }
  return shared.size === 0 ? [...rounds] : rounds.filter((entry) => !shared.has(`${entry.sequence}\u0000${entry.key}`));
}
