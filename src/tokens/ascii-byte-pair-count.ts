/**
 * The number of tokens byte-pair encoding makes of `piece`, an ASCII piece of the pre-tokeniser, given the rank of
 * each token (`rankOf`, undefined for a string that is no token). It is gpt-tokenizer's merge (`bytePairMerge`:
 * merge the adjacent pair of lowest rank, the leftmost on a tie, until no pair is a token) on the piece's characters,
 * which for ASCII are its bytes, so ranks are looked up by substring instead of by decoding byte arrays: about four
 * times faster. Tests hold it to the library's own encoding.
 *
 * @example
 * asciiBytePairCount('tokenizer', rankOf); // 2 with o200k ("token", "izer")
 */
export function asciiBytePairCount(piece: string, rankOf: (token: string) => number | undefined): number {
  const length = piece.length;
  if (length <= 1) return length;
  const starts: number[] = [];
  const ranks: number[] = [];
  const rankAt = (index: number): number => {
    const end = starts[index + 2];
    if (end === undefined) return Number.POSITIVE_INFINITY;
    return rankOf(piece.slice(starts[index], end)) ?? Number.POSITIVE_INFINITY;
  };
  for (let index = 0; index <= length; index++) {
    starts.push(index);
    ranks.push(
      index < length - 1
        ? (rankOf(piece.slice(index, index + 2)) ?? Number.POSITIVE_INFINITY)
        : Number.POSITIVE_INFINITY,
    );
  }
  while (starts.length > 1) {
    let lowest = Number.POSITIVE_INFINITY;
    let at = -1;
    for (let index = 0; index < ranks.length - 1; index++) {
      if (ranks[index]! < lowest) {
        lowest = ranks[index]!;
        at = index;
      }
    }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    ranks.splice(at, 1);
    ranks[at] = rankAt(at);
    if (at > 0) ranks[at - 1] = rankAt(at - 1);
  }
  return starts.length - 1;
}

/** Whether every code unit of `text` is ASCII. */
export function isAsciiText(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 0x7f) return false;
  return true;
}
