import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { canonicalJson } from './canonical-json.js';
import { withoutContextMessageRef } from '../segments/context-message-ref.js';

/**
 * A SHA-256 (hex) of the messages in a canonical JSON form: object keys sorted, `undefined` left out, URLs as
 * their `href`, binary data as base64. Two equal contexts hash equally whatever the key order or object
 * identity, so a rebuild can be checked against the snapshot. The engine's message references are left out.
 */
export function hashContextMessages(messages: readonly ModelMessage[]): string {
  const hash = createHash('sha256');
  hash.update(canonicalJson(messages.map(withoutContextMessageRef)));
  return hash.digest('hex');
}
