import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';

/**
 * A SHA-256 (hex) of the messages in a canonical JSON form: object keys sorted, `undefined` left out, URLs as
 * their `href`, binary data as base64. Two equal contexts hash equally whatever the key order or object
 * identity, so a rebuild can be checked against the snapshot.
 */
export function hashContextMessages(messages: readonly ModelMessage[]): string {
  const hash = createHash('sha256');
  hash.update(canonicalJson(messages));
  return hash.digest('hex');
}

function canonicalJson(value: unknown): string {
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
