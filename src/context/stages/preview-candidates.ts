import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import { memoOfCounter, type TokenCounter } from '../../tokens/token-counter.js';
import type { ContextToolOutputPreviewPolicy } from '../contracts/context-policy.js';
import { groupTurns, hasUnfinishedToolWork, type ContextSegment } from '../segments/context-segment.js';
import { contentPartKey } from './preview-message-content.js';
import { countModelPartTokens } from '../../tokens/count-message-tokens.js';
import { toolInputText } from './preview-tool-input.js';
import { toolOutputText } from './preview-tool-output.js';

type ContentPart = Exclude<ModelMessage['content'], string>[number];

/** Something the trim may preview: a tool input or output, or a text or file part. */
export interface PreviewCandidate {
  index: number;
  toolCallId: string;
  tokens: number;
  part: { part?: 'input' | 'content' };
  file: boolean;
}

/** What names a candidate's preview: its call (or content part), and the message its call is in. */
export function previewOf(segments: readonly ContextSegment[], { index, toolCallId, part }: PreviewCandidate) {
  // A content part's key names its stored message already.
  if (part.part === 'content') return { toolCallId, ...part };
  const segment = segments[index]!;
  return { toolCallId, ...part, sequence: segment.kind === 'message' ? segment.sequence : null };
}

/**
 * Tool inputs and outputs in the segments of `within`, largest first; with `content`, also the text and file
 * parts of stored messages (of older turns: the newest turn's are never shortened).
 */
export function previewCandidates(
  segments: readonly ContextSegment[],
  measure: ContextMeasure,
  within: ReadonlySet<number>,
  content = false,
): PreviewCandidate[] {
  const candidates: PreviewCandidate[] = [];
  // Each shrink size lists the candidates again: a part's count (and key) is made once per part object.
  const memo = candidateMemo(measure.tokenCounter);
  const count = (part: object, text: () => string) => {
    let tokens = memo.get(part);
    if (tokens === undefined) memo.set(part, (tokens = measure.tokenCounter.count(text())));
    return tokens;
  };
  for (const index of within) {
    const segment = segments[index]!;
    if (segment.kind !== 'message') continue;
    for (const message of segment.messages) {
      if (typeof message.content === 'string' || message.role === 'system') continue;
      for (const part of message.content as ContentPart[]) {
        if (part.type === 'tool-result')
          candidates.push({
            index,
            toolCallId: part.toolCallId,
            tokens: count(part.output as object, () => toolOutputText(part.output)),
            part: {},
            file: false,
          });
        else if (part.type === 'tool-call')
          candidates.push({
            index,
            toolCallId: part.toolCallId,
            tokens: count(part, () => toolInputText(part.input)),
            part: { part: 'input' },
            file: false,
          });
        else if (content) {
          const key = memoizedContentKey(segment.sequence, part);
          if (key === undefined) continue;
          const file = part.type !== 'text';
          // A text part's count is its part count (from the stored per-part counts when it was loaded with them).
          const tokens = file ? Number.MAX_SAFE_INTEGER : countModelPartTokens(part, measure.tokenCounter).text;
          candidates.push({ index, toolCallId: key, tokens, part: { part: 'content' }, file });
        }
      }
    }
  }
  return candidates
    .map((candidate, order) => ({ ...candidate, order }))
    .sort((a, b) => b.tokens - a.tokens || a.index - b.index || a.order - b.order);
}

const candidateMemos = new Map<string, WeakMap<object, number>>();
function candidateMemo(tokenCounter: TokenCounter): WeakMap<object, number> {
  return memoOfCounter(candidateMemos, tokenCounter);
}

const contentKeys = new WeakMap<object, { sequence: number | null; key: string | undefined }>();
/** {@link contentPartKey}, made once per (part object, sequence): a part's key hashes its text. */
export function memoizedContentKey(sequence: number | null, part: ContentPart): string | undefined {
  const known = contentKeys.get(part);
  if (known && known.sequence === sequence) return known.key;
  const key = contentPartKey(sequence, part);
  contentKeys.set(part, { sequence, key });
  return key;
}

/** The preview sizes tried in turn: `tokens`, halved down to `minimumTokens`. */
export function previewSizes(preview: ContextToolOutputPreviewPolicy): number[] {
  const sizes = [preview.tokens];
  for (let size = Math.floor(preview.tokens / 2); size > preview.minimumTokens; size = Math.floor(size / 2))
    sizes.push(size);
  if (preview.minimumTokens < preview.tokens) sizes.push(preview.minimumTokens);
  return sizes;
}

/** Segment indices of the newest turn, of turns with unfinished tool work, and of pinned messages. */
export function requiredIndices(segments: readonly ContextSegment[]): Set<number> {
  const turns = groupTurns(segments);
  const required = new Set<number>();
  turns.forEach((turn, position) => {
    if (position === turns.length - 1 || hasUnfinishedToolWork(turn.indices.map((index) => segments[index]!)))
      for (const index of turn.indices) required.add(index);
  });
  segments.forEach((segment, index) => {
    if (segment.kind === 'message' && segment.pinned) required.add(index);
  });
  return required;
}
