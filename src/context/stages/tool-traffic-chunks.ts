import type { ContextSegment } from '../segments/context-segment.js';

type ContentPart = { type: string; toolCallId?: unknown; input?: unknown; output?: unknown };

/**
 * Splits the prunable calls (`ordered`, oldest first) into consecutive chunks of about `chunkTokens` of tool traffic
 * each on average, and returns where each chunk ends (exclusive indices into `ordered`; the last is
 * `ordered.length`). A call ends a chunk with a chance of its traffic's size over `chunkTokens` (its inputs and
 * outputs, about four characters a token; always from `chunkTokens` up), drawn from a hash of its id: whether it
 * ends one depends on that call alone. So a growing thread only adds chunks after the ones it had (pruning whole
 * chunks cuts the history at the same place until one more is needed: the prefix of the request stays what it was
 * for a provider's prompt cache), and the newest turns of a thread are cut where the whole thread is cut, however
 * much comes before them.
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
  ordered.forEach((id, index) => {
    if (endsChunk(id, sizes.get(id)!, chunkTokens)) ends.push(index + 1);
  });
  if (ends.at(-1) !== ordered.length) ends.push(ordered.length);
  return ends;
}

// Whether a call of `size` tokens ends a chunk: with a chance of `size / chunkTokens`, from its id's hash.
function endsChunk(id: string, size: number, chunkTokens: number): boolean {
  return size >= chunkTokens || unitHash(id) * chunkTokens < size;
}

// FNV-1a of the id's UTF-16 code units, as a number in [0, 1).
function unitHash(id: string): number {
  let hash = 0x81_1c_9d_c5;
  for (let index = 0; index < id.length; index++) hash = Math.imul(hash ^ id.charCodeAt(index), 0x01_00_01_93);
  return (hash >>> 0) / 2 ** 32;
}
