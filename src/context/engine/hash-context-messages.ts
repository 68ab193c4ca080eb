import { createHash, type Hash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { canonicalJson } from './canonical-json.js';
import { withoutContextMessageRef } from '../segments/context-message-ref.js';

/**
 * A SHA-256 (hex) of the messages in a canonical JSON form: object keys sorted, `undefined` left out, URLs as
 * their `href`, binary data as base64. Two equal contexts hash equally whatever the key order or object
 * identity, so a rebuild can be checked against the snapshot. The engine's message references are left out.
 * Each message's canonical form is made once per message object and remembered: a message changed in place after
 * it was hashed keeps its old hash (the engine never changes a message; it builds a new one). The hash's state
 * after the last list hashed that began with the same message object is kept too, so a list that extends it (the
 * same objects, then more: the next request of a thread whose start did not move) hashes only what it adds.
 */
export function hashContextMessages(messages: readonly ModelMessage[]): string {
  const first = messages[0];
  const kept = first ? prefixes.get(first) : undefined;
  let hash: Hash;
  let start = 0;
  if (
    kept &&
    kept.messages.length <= messages.length &&
    kept.messages.every((message, index) => message === messages[index])
  ) {
    hash = kept.state.copy();
    start = kept.messages.length;
  } else {
    hash = createHash('sha256');
    hash.update('[');
  }
  // The canonical JSON of the array, fed in pieces of about 64 KB: `[`, each message's (made once per message
  // object), `]`. One update per message would cost a native call each.
  let pending = '';
  for (let index = start; index < messages.length; index++) {
    const message = messages[index]!;
    let json = canonicalMessages.get(message);
    if (json === undefined) canonicalMessages.set(message, (json = canonicalJson(withoutContextMessageRef(message))));
    pending += index === 0 ? json : `,${json}`;
    if (pending.length >= 65_536) {
      hash.update(pending);
      pending = '';
    }
  }
  hash.update(pending);
  if (first && start < messages.length) prefixes.set(first, { messages: [...messages], state: hash.copy() });
  hash.update(']');
  return hash.digest('hex');
}

// Messages the engine hashes are not changed afterwards: it builds new ones for every change.
const canonicalMessages = new WeakMap<ModelMessage, string>();
// Per first message: the last list hashed from it and the hash's state before the closing `]`.
const prefixes = new WeakMap<ModelMessage, { messages: readonly ModelMessage[]; state: Hash }>();
