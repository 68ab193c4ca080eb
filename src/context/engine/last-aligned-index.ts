/**
 * The edits past which {@link lastAlignedIndex} gives up: its memory grows with their square (a million entries
 * here), and a caller's messages that far from the store are not a conversion of the same thread.
 */
const MAX_EDITS = 1000;

/**
 * The index of the last item of `given` (`n` items) in a longest alignment with `stored` (`m` items): pairs in
 * order, `pairs(x, y)` telling whether given item `x` may pair with stored item `y`, the items each side lacks
 * skipped (Myers' diff, which pairs each item as early as it can). -1 when none pairs, or undefined when more than
 * {@link MAX_EDITS} unpaired items separate them.
 *
 * Why an alignment and not a walk that pairs each item with the next equal one: an item of `given` whose own
 * counterpart differs (a call the store closed, say) would be paired with a later item that reads the same ("OK.")
 * and skip every stored item in between, so that nothing after it pairs any more.
 */
export function lastAlignedIndex(n: number, m: number, pairs: (x: number, y: number) => boolean): number | undefined {
  const limit = Math.min(n + m, MAX_EDITS);
  const offset = limit + 1;
  // Furthest index in `given` reached on each diagonal (given index − stored index), by edits used.
  const furthest = new Int32Array(2 * limit + 3);
  const trace: Int32Array[] = [];
  for (let edits = 0; edits <= limit; edits++) {
    trace.push(furthest.slice(offset - edits, offset + edits + 1));
    for (let diagonal = -edits; diagonal <= edits; diagonal += 2) {
      const down =
        diagonal === -edits ||
        (diagonal !== edits && furthest[offset + diagonal - 1]! < furthest[offset + diagonal + 1]!);
      let x = down ? furthest[offset + diagonal + 1]! : furthest[offset + diagonal - 1]! + 1;
      let y = x - diagonal;
      while (x < n && y < m && pairs(x, y)) {
        x += 1;
        y += 1;
      }
      furthest[offset + diagonal] = x;
      if (x >= n && y >= m) return lastPaired(trace, edits, diagonal, n);
    }
  }
  return undefined;
}

// Walks the path back from its end (`given` exhausted at `edits` on `diagonal`) to its last paired item.
function lastPaired(trace: readonly Int32Array[], edits: number, diagonal: number, n: number): number {
  let x = n;
  let y = n - diagonal;
  for (let step = edits; step > 0; step--) {
    const before = trace[step]!;
    const at = (k: number) => before[k + step]!;
    const k = x - y;
    const previous = k === -step || (k !== step && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const previousX = at(previous);
    const previousY = previousX - previous;
    // Items paired on the diagonal after the edit.
    if (x > previousX && y > previousY) return x - 1;
    x = previousX;
    y = previousY;
  }
  return x - 1;
}
