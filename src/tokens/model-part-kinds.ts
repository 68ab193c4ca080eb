import { isToolUIPart, type ContextUIMessage, type ContextUIPart } from '../model/context-ui-message.js';

/**
 * What the context engine's pruning may do to one model part: `reasoning` (removed outside the newest turns),
 * `tool` (a tool call, result, approval request or response: removed with its call outside the newest turns),
 * `text` (a text part or a string content: never pruned, its stored count is used as it is) or `other` (files and
 * custom parts: never pruned, counted again from the part).
 */
export type ModelPartKind = 'text' | 'other' | 'reasoning' | 'tool';

/**
 * The kind of each part of the model messages `message` converts to with the default conversion (no
 * `convertDataPart`), in the order of its stored per-part counts (`countStoredPartTokens`; a string content is one
 * entry), without converting it: it follows `convertUIMessageToModelMessages` part by part (a test compares both
 * on generated messages). Lets the engine size what pruning leaves of a stored message from its per-part counts.
 */
export function modelPartKinds(message: ContextUIMessage): ModelPartKind[] {
  const parts = message.parts;
  if (message.role === 'system') return ['text'];
  if (message.role === 'user')
    return parts.filter((part) => part.type === 'text' || part.type === 'file').map(userPartKind);
  if (message.role !== 'assistant') return [];
  const kinds: ModelPartKind[] = [];
  let block: ContextUIPart[] = [];
  const flush = () => {
    stepKinds(block, kinds);
    block = [];
  };
  for (const part of parts) {
    if (part.type === 'step-start') flush();
    else if (part.type === 'steering-message') {
      flush();
      for (const inner of (part.parts as ContextUIPart[] | undefined) ?? []) kinds.push(userPartKind(inner));
    } else block.push(part);
  }
  flush();
  return kinds;
}

// A user content part: `convertUserContentPart` makes a text of a text part, a file of anything else.
function userPartKind(part: ContextUIPart): ModelPartKind {
  return part.type === 'text' ? 'text' : 'other';
}

// One step: the assistant message's parts, then the tool message's (as `convertAssistantStep` orders them).
function stepKinds(block: readonly ContextUIPart[], kinds: ModelPartKind[]): void {
  for (const part of block) {
    if (part.type === 'text') kinds.push('text');
    else if (part.type === 'custom' || part.type === 'file') kinds.push('other');
    else if (part.type === 'reasoning' || part.type === 'reasoning-file') kinds.push('reasoning');
    else if (isToolUIPart(part) && part.state !== 'input-streaming') {
      kinds.push('tool');
      const approval = part.approval as { approved?: unknown } | null | undefined;
      if (approval != null) kinds.push('tool');
      if (
        part.providerExecuted === true &&
        part.state !== 'approval-responded' &&
        (part.state === 'output-available' || part.state === 'output-error')
      )
        kinds.push('tool');
    }
  }
  for (const part of block) {
    if (!isToolUIPart(part)) continue;
    const approval = part.approval as { approved?: unknown } | null | undefined;
    if (part.providerExecuted === true && approval?.approved == null) continue;
    if (approval?.approved != null) kinds.push('tool');
    if (part.state === 'approval-responded' && approval?.approved === false) kinds.push('tool');
    if (part.providerExecuted === true) continue;
    if (part.state === 'output-denied' || part.state === 'output-error' || part.state === 'output-available')
      kinds.push('tool');
  }
}
