import { createHash, type Hash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { canonicalJson } from './canonical-json.js';
import { withoutContextMessageRef } from '../segments/context-message-ref.js';

/**
 * A SHA-256 (hex) of the messages in a canonical JSON form: object keys sorted, `undefined` left out, URLs as
 * their `href`, binary data as base64. Two equal contexts hash equally whatever the key order or object
 * identity, so a rebuild can be checked against the snapshot. The engine's message references are left out.
 * Each message's canonical form is made once per message object and remembered: a message changed in place after
 * it was hashed keeps its old hash (the engine never changes a message; it builds a new one). Per first message
 * object, the hash's state is kept at points along the last list hashed from it (about every 16 KB, and at its
 * end), so a list that shares a beginning with it (the same objects: the next request of a thread whose start did
 * not move, where an older turn's tool traffic was just pruned) hashes only from the last point they share.
 */
export function hashContextMessages(messages: readonly ModelMessage[]): string {
  const first = messages[0];
  const kept = first ? prefixes.get(first) : undefined;
  const shared = kept ? sharedLength(kept.messages, messages) : 0;
  // The last point at or before the shared part's end (the first is index 1: the first message is always shared).
  const points = kept?.points.filter((point) => point.index <= shared) ?? [];
  const resume = points.at(-1);
  const hash = resume ? resume.state.copy() : createHash('sha256').update('[');
  let pending = '';
  let pendingFrom = resume?.index ?? 0;
  for (let index = pendingFrom; index < messages.length; index++) {
    const message = messages[index]!;
    let json = canonicalMessages.get(message);
    if (json === undefined) canonicalMessages.set(message, (json = canonicalJson(withoutContextMessageRef(message))));
    pending += index === 0 ? json : `,${json}`;
    if (pending.length >= POINT_CHARACTERS || index === messages.length - 1) {
      hash.update(pending);
      pending = '';
      pendingFrom = index + 1;
      // A point after this message (a copy: the hash goes on).
      if (first && index > 0) points.push({ index: index + 1, state: hash.copy() });
    }
  }
  if (first && pendingFrom > (resume?.index ?? 0)) prefixes.set(first, { messages: [...messages], points });
  hash.update(']');
  return hash.digest('hex');
}

// Characters of canonical JSON between two kept states: one native update each, and a resume rehashes at most this.
const POINT_CHARACTERS = 16_384;

function sharedLength(kept: readonly ModelMessage[], messages: readonly ModelMessage[]): number {
  const limit = Math.min(kept.length, messages.length);
  let index = 0;
  while (index < limit && kept[index] === messages[index]) index++;
  return index;
}

// Messages the engine hashes are not changed afterwards: it builds new ones for every change.
const canonicalMessages = new WeakMap<ModelMessage, string>();
// Per first message: the last list hashed from it and the hash's states (before the closing `]`) along it, each
// after the message before `index`.
const prefixes = new WeakMap<ModelMessage, { messages: readonly ModelMessage[]; points: HashPoint[] }>();

interface HashPoint {
  index: number;
  state: Hash;
}
