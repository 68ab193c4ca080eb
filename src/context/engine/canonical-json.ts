/**
 * JSON with object keys sorted and `undefined` left out (URLs as their `href`, dates as ISO strings, binary data as
 * base64), so that equal values give equal text whatever their key order: jsonb gives a stored value back with its
 * keys reordered, and a snapshot's hash must not depend on object identity.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof URL) return JSON.stringify(value.href);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString('base64'));
  if (value instanceof ArrayBuffer) return JSON.stringify(Buffer.from(value).toString('base64'));
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value as object)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return 'null';
}
