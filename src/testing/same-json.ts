/**
 * Whether two JSON values are equal as Postgres compares `jsonb`: object keys in any order, a property whose value is
 * `undefined` absent (as `JSON.stringify` leaves it out), an `undefined` array item null. The in-memory store uses it
 * to tell a change of parts from a write of the same parts, as the content version trigger does.
 */
export function sameJson(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null)
    return (left ?? null) === (right ?? null);
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => sameJson(item, right[index]));
  }
  const keysOf = (value: object) =>
    Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort();
  const [leftKeys, rightKeys] = [keysOf(left), keysOf(right)];
  return (
    leftKeys.length === rightKeys.length &&
    leftKeys.every(
      (key, index) =>
        key === rightKeys[index] &&
        sameJson((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]),
    )
  );
}
