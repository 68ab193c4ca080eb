import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { canonicalJson } from './canonical-json.js';
import { withoutContextMessageRef } from '../segments/context-message-ref.js';

/**
 * A SHA-256 (hex) of the messages in a canonical JSON form: object keys sorted, `undefined` left out, URLs as
 * their `href`, binary data as base64. Two equal contexts hash equally whatever the key order or object
 * identity, so a rebuild can be checked against the snapshot. The engine's message references are left out.
 * Each message's canonical form is made once per message object and remembered: a message changed in place after
 * it was hashed keeps its old hash (the engine never changes a message; it builds a new one).
 */
export function hashContextMessages(messages: readonly ModelMessage[]): string {
  // The canonical JSON of the array, fed in pieces of about 64 KB: `[`, each message's (made once per message
  // object), `]`. One update per message would cost a native call each.
  const hash = createHash('sha256');
  let pending = '[';
  messages.forEach((message, index) => {
    let json = canonicalMessages.get(message);
    if (json === undefined) canonicalMessages.set(message, (json = canonicalJson(withoutContextMessageRef(message))));
    pending += index === 0 ? json : `,${json}`;
    if (pending.length >= 65_536) {
      hash.update(pending);
      pending = '';
    }
  });
  hash.update(`${pending}]`);
  return hash.digest('hex');
}

// Messages the engine hashes are not changed afterwards: it builds new ones for every change.
const canonicalMessages = new WeakMap<ModelMessage, string>();
