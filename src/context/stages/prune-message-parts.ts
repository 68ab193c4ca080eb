import type { ModelMessage } from 'ai';

/** Whether an assistant message has reasoning parts. */
export function hasReasoning(message: ModelMessage): boolean {
  return (
    message.role === 'assistant' &&
    typeof message.content !== 'string' &&
    message.content.some((part) => part.type === 'reasoning' || part.type === 'reasoning-file')
  );
}

// A pruned message is made once per message object and pruning (the engine never changes a message in place), so a
// message a store's cache hands out again is pruned into the same object again, and what is memoised per object
// downstream (counts, hashes, previews) is found again.
const withoutReasoning = new WeakMap<ModelMessage, ModelMessage>();
const withoutToolParts = new WeakMap<ModelMessage, Map<string, ModelMessage>>();

/** The message without its reasoning parts (the same object when it has none); made once per message. */
export function removeReasoning(message: ModelMessage): ModelMessage {
  if (message.role !== 'assistant' || typeof message.content === 'string' || !hasReasoning(message)) return message;
  let pruned = withoutReasoning.get(message);
  if (!pruned) {
    const content = message.content.filter((part) => part.type !== 'reasoning' && part.type !== 'reasoning-file');
    pruned = content.length === message.content.length ? message : { ...message, content };
    withoutReasoning.set(message, pruned);
  }
  return pruned;
}

/**
 * The message without the parts of the tool calls in `ids` (calls, results, approval requests, and approval
 * responses through `approvalToCall`), and without reasoning that led only to them; the same object when none is
 * there. Made once per message and set of removed parts.
 */
export function removeToolParts(
  message: ModelMessage,
  ids: ReadonlySet<string>,
  approvalToCall: ReadonlyMap<string, string>,
): ModelMessage {
  if (typeof message.content === 'string' || (message.role !== 'tool' && message.role !== 'assistant')) return message;
  // Which parts go decides the result: it is the memo's key.
  const removedAt = (message.content as Array<{ type: string; toolCallId?: string; approvalId?: string }>).map(
    (part) =>
      part.type === 'tool-approval-response'
        ? message.role === 'tool' && hasCall(ids, approvalToCall.get(part.approvalId!))
        : (part.type === 'tool-result' ||
            (message.role === 'assistant' && (part.type === 'tool-call' || part.type === 'tool-approval-request'))) &&
          ids.has(part.toolCallId!),
  );
  if (!removedAt.includes(true)) return message;
  const key = removedAt.map((removed) => (removed ? '1' : '0')).join('');
  let made = withoutToolParts.get(message);
  const found = made?.get(key);
  if (found) return found;
  const pruned = removeMarkedParts(message, removedAt);
  if (!made) withoutToolParts.set(message, (made = new Map()));
  made.set(key, pruned);
  return pruned;
}

// A response that answers no known request (its request was cut away) is no call's, not that of a call whose id
// is the empty string: the tool-traffic key (`toolRemovalKey`) says so too, and a plan made for it is replayed.
function hasCall(ids: ReadonlySet<string>, call: string | undefined): boolean {
  return call !== undefined && ids.has(call);
}

// The message without the parts marked in `removedAt` (and, in an assistant message, the reasoning that led only to
// them).
function removeMarkedParts(message: ModelMessage, removedAt: boolean[]): ModelMessage {
  if (message.role === 'tool')
    return { ...message, content: message.content.filter((_part, index) => !removedAt[index]) };
  if (message.role !== 'assistant' || typeof message.content === 'string') return message;
  const parts = message.content;
  // A run of reasoning goes when everything it led to was removed (keeps OpenAI reasoning items paired).
  const isReasoning = (index: number) => parts[index]!.type === 'reasoning' || parts[index]!.type === 'reasoning-file';
  for (let start = 0; start < parts.length;) {
    if (!isReasoning(start)) {
      start += 1;
      continue;
    }
    let end = start;
    while (end < parts.length && isReasoning(end)) end += 1;
    let next = end;
    while (next < parts.length && !isReasoning(next)) next += 1;
    const followers = removedAt.slice(end, next);
    if (followers.length > 0 && followers.every(Boolean))
      for (let index = start; index < end; index++) removedAt[index] = true;
    start = end;
  }
  return { ...message, content: parts.filter((_part, index) => !removedAt[index]) } as ModelMessage;
}
