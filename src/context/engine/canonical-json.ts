/**
 * JSON with object keys sorted and `undefined` left out (URLs as their `href`, dates as ISO strings, binary data as
 * base64), so that equal values give equal text whatever their key order: jsonb gives stored metadata back with its
 * keys reordered, another writer may order a message's keys otherwise, and a snapshot's hash must not depend on
 * object identity.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return JSON.stringify(value);
  if (typeof value !== 'object' || value === null) return 'null';
  if (value instanceof URL) return JSON.stringify(value.href);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString('base64'));
  if (value instanceof ArrayBuffer) return JSON.stringify(Buffer.from(value).toString('base64'));
  // Built by concatenation, without the arrays of pieces a map and join would make: the snapshot's hash runs it
  // over every message of a long thread.
  if (Array.isArray(value)) {
    let json = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) json += ',';
      // A hole stays empty, as `map` and `join` leave it.
      if (!(index in value)) continue;
      const item: unknown = value[index];
      json += item === undefined ? 'null' : canonicalJson(item);
    }
    return `${json}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let json = '{';
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    json += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`;
    first = false;
  }
  return `${json}}`;
}
