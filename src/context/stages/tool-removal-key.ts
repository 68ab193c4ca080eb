import type { ModelMessage } from 'ai';
import type { SegmentFacts } from '../segments/segment-facts.js';
import type { PruningRun } from './pruning-run.js';

/**
 * The tool parts a pruning decision touches in the messages, as a key ('' when none): per part 1 or 0, and for an
 * approval response the call it answers (the map is built over every segment). Not '' exactly when the segment
 * mentions a call to remove. For a cached segment that answers no approval, none or all of its parts (most
 * segments of a long thread) are found from its tool part ids, remembered (in the segment's `facts`) with the key of
 * all.
 */
export function toolRemovalKey(
  messages: readonly ModelMessage[],
  run: PruningRun,
  facts: SegmentFacts | undefined,
): string {
  const known = facts ? (facts.toolParts ??= findToolParts(messages)) : undefined;
  if (known && !known.answers) {
    let removed = 0;
    for (const id of known.ids) if (run.toolCallIds.has(id)) removed += 1;
    if (removed === 0) return '';
    if (removed === known.ids.length) return known.allKey;
  }
  let key = '';
  let any = false;
  for (const message of messages) {
    if (!touchesTools(message)) continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string; approvalId?: string }>) {
      if (part.type === 'tool-approval-response') {
        const call = run.approvalToCall.get(part.approvalId!);
        const removed = call !== undefined && run.toolCallIds.has(call);
        any ||= removed;
        key += removed ? `[${call}]` : '0';
      } else if (isRemovableToolPart(part)) {
        const removed = run.toolCallIds.has(part.toolCallId!);
        any ||= removed;
        key += removed ? '1' : '0';
      }
    }
    key += ',';
  }
  return any ? key : '';
}

type ToolParts = NonNullable<SegmentFacts['toolParts']>;
// The call ids of the tool calls, results and approval requests (in order), whether an approval is answered, and
// the key when every part is removed.
function findToolParts(messages: readonly ModelMessage[]): ToolParts {
  const found: ToolParts = { ids: [], answers: false, allKey: '' };
  for (const message of messages) {
    if (!touchesTools(message)) continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string }>) {
      if (part.type === 'tool-approval-response') found.answers = true;
      else if (isRemovableToolPart(part)) {
        found.ids.push(part.toolCallId!);
        found.allKey += '1';
      }
    }
    found.allKey += ',';
  }
  return found;
}

function touchesTools(message: ModelMessage): boolean {
  return typeof message.content !== 'string' && (message.role === 'assistant' || message.role === 'tool');
}

function isRemovableToolPart(part: { type: string }): boolean {
  return part.type === 'tool-call' || part.type === 'tool-result' || part.type === 'tool-approval-request';
}
