import type { ContextSegment } from '../segments/context-segment.js';

type ContentPart = { type: string; toolCallId?: unknown; input?: unknown; output?: unknown };

/**
 * Splits the prunable calls (`ordered`, oldest first) into consecutive chunks of about `chunkTokens` of tool traffic
 * each, counted from the oldest call (a call's inputs and outputs, about four characters a token), and returns
 * where each chunk ends (exclusive indices into `ordered`; the last is `ordered.length`). A growing thread only adds
 * chunks after the ones it had, so pruning whole chunks cuts the history at the same place until one more is
 * needed: the prefix of the request stays what it was for a provider's prompt cache.
 */
export function toolTrafficChunkEnds(
  segments: readonly ContextSegment[],
  ordered: readonly string[],
  chunkTokens: number,
): number[] {
  const sizes = new Map<string, number>(ordered.map((id) => [id, 0]));
  for (const segment of segments)
    for (const message of segment.messages) {
      if (typeof message.content === 'string') continue;
      for (const part of message.content as ContentPart[]) {
        if (typeof part.toolCallId !== 'string' || !sizes.has(part.toolCallId)) continue;
        const payload = part.type === 'tool-call' ? part.input : part.output;
        const characters =
          typeof payload === 'string' ? payload.length : (JSON.stringify(payload ?? null)?.length ?? 0);
        sizes.set(part.toolCallId, sizes.get(part.toolCallId)! + Math.ceil(characters / 4));
      }
    }
  const ends: number[] = [];
  let chunk = 0;
  ordered.forEach((id, index) => {
    chunk += sizes.get(id)!;
    if (chunk >= chunkTokens) {
      ends.push(index + 1);
      chunk = 0;
    }
  });
  if (ends.at(-1) !== ordered.length) ends.push(ordered.length);
  return ends;
}
