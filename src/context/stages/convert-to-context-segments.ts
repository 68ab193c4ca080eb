import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { ContextMessage, ContextMessageCache } from '../../model/context-store.js';
import type { ConvertStageReport } from '../contracts/stage-reports.js';
import { sumRemovedTokens, type ContextRemoval } from '../segments/context-removal.js';
import { createMessageSegment, type MessageSegment } from '../segments/context-segment.js';
import { freezeSegment } from '../segments/segment-facts.js';
import { convertUIMessageToModelMessages, type ConvertUIMessageOptions } from '../../tokens/convert-ui-message.js';
import { cachedConversion, type CachedRow } from '../caches/cached-row.js';
import { fileText } from '../../tokens/count-message-tokens.js';
import { storedTokenCountId } from '../../tokens/count-stored-message-tokens.js';
import { isUnavailableToolPart } from '../../tokens/convert-assistant-step.js';
import { seedPartTokenCounts } from '../../tokens/seed-part-token-counts.js';

/** Options of {@link convertToContextSegments}. */
export interface ConvertToContextSegmentsOptions extends ConvertUIMessageOptions {
  /** Validated and filtered stored messages, oldest first. */
  messages: readonly ContextMessage[];
  /** The counter and profile. */
  measure: ContextMeasure;
  /**
   * Keeps each message's model messages between requests (`cachedConversion`); used only without custom
   * conversions (`convertToolOutput`, `convertDataPart`), which may convert the same message differently. The
   * segment of a cached message whose stored count is used is then frozen (its tally too) and the same object every
   * request: change a copy (`{ ...segment }`), never the segment. @default none
   */
  cache?: ContextMessageCache;
}

/**
 * Stage 4: converts each stored message to model messages ({@link convertUIMessageToModelMessages}) and keeps
 * them together as one segment that remembers the message's sequence. The stored count is used as it is when
 * its `tokenCounterId` matches {@link storedTokenCountId} (images and files are priced from the parts, which
 * needs no tokenizing); otherwise the messages are counted. With `convertToolOutput`, messages with tool
 * parts are always counted, because the stored count assumed the default output conversion; so is a message with
 * a part stored as unavailable whose tool is in `availableTools`.
 */
export function convertToContextSegments({
  messages,
  measure,
  cache,
  ...conversion
}: ConvertToContextSegmentsOptions): {
  segments: MessageSegment[];
  report: ConvertStageReport;
} {
  const segments: MessageSegment[] = [];
  const removed: ContextRemoval[] = [];
  const countedSequences: number[] = [];
  let storedCounts = 0;
  let modelMessageCount = 0;
  const countId = storedTokenCountId(measure.tokenCounter);
  const reusable = cache && !conversion.convertToolOutput && !conversion.convertDataPart ? cache : undefined;
  for (const stored of messages) {
    // A part of a tool that is back converts differently from the stored count and the cached conversion.
    const revived = revivesUnavailableTool(stored, conversion.availableTools);
    const held = reusable && !revived ? cachedConversion(stored, reusable) : undefined;
    const modelMessages = held?.messages ?? convertUIMessageToModelMessages(stored.message, conversion);
    if (modelMessages.length === 0) {
      removed.push({ sequence: stored.sequence, reason: 'message-empty', tokens: 0 });
      continue;
    }
    modelMessageCount += modelMessages.length;
    const pinned = stored.pinned === true;
    const usable =
      !revived &&
      stored.tokenCount != null &&
      stored.tokenCounterId === countId &&
      !(
        conversion.convertToolOutput &&
        stored.message.parts.some((part) => part.type === 'dynamic-tool' || part.type.startsWith('tool-'))
      );
    if (usable) {
      storedCounts += 1;
      const parts = stored.partTokenCounts;
      // Cached messages are seeded once per counter (the seeds are kept per part object).
      if (
        parts &&
        !held?.seeded.has(measure.tokenCounter.id) &&
        parts.reduce((sum, count) => sum + count, 0) === stored.tokenCount &&
        seedPartTokenCounts(modelMessages, parts, measure.tokenCounter)
      )
        held?.seeded.add(measure.tokenCounter.id);
      segments.push(storedCountSegment(stored, modelMessages, held));
    } else {
      countedSequences.push(stored.sequence);
      segments.push(createMessageSegment({ messages: modelMessages, sequence: stored.sequence, pinned, measure }));
    }
  }
  return {
    segments,
    report: {
      stage: 'convert',
      removed,
      messages: modelMessageCount,
      storedCounts,
      countedSequences,
      tokensSaved: sumRemovedTokens(removed),
    },
  };
}

function revivesUnavailableTool(stored: ContextMessage, availableTools: readonly string[] | undefined): boolean {
  if (!availableTools || availableTools.length === 0) return false;
  return stored.message.parts.some(
    (part) => isUnavailableToolPart(part) && availableTools.includes(String(part.toolName)),
  );
}

// The segment of a message whose stored count is used. A cached row's segment is the same frozen object every
// request while its fields match: later stages remember what they made of it.
function storedCountSegment(
  stored: ContextMessage,
  modelMessages: ModelMessage[],
  held: CachedRow | undefined,
): MessageSegment {
  const pinned = stored.pinned === true;
  const known = held?.segment;
  if (
    known &&
    known.messages === modelMessages &&
    known.sequence === stored.sequence &&
    known.pinned === pinned &&
    known.tokens.text === stored.tokenCount
  )
    return known;
  const segment: MessageSegment = {
    kind: 'message',
    sequence: stored.sequence,
    pinned,
    messages: modelMessages,
    tokens: { text: stored.tokenCount!, ...countAttachments(modelMessages), messages: modelMessages.length },
  };
  if (held) held.segment = freezeSegment(segment);
  return held?.segment ?? segment;
}

/** Images and files in messages, without tokenizing (text files are part of the stored text count). */
function countAttachments(messages: readonly ModelMessage[]): { images: number; files: number } {
  const found = { images: 0, files: 0 };
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content as Array<{ type: string; [key: string]: unknown }>) {
      if (part.type === 'tool-result') {
        const output = part.output as { type: string; value?: unknown };
        if (output?.type === 'content' && Array.isArray(output.value))
          for (const item of output.value) countAttachment(item, found);
      } else countAttachment(part, found);
    }
  }
  return found;
}

function countAttachment(part: { type: string; [key: string]: unknown }, found: { images: number; files: number }) {
  if (
    part.type !== 'file' &&
    part.type !== 'image' &&
    part.type !== 'reasoning-file' &&
    !part.type.startsWith('image-') &&
    !part.type.startsWith('file-')
  )
    return;
  if (fileText(part) !== undefined) return;
  if (part.type.startsWith('image') || String(part.mediaType ?? '').startsWith('image/')) found.images += 1;
  else found.files += 1;
}
