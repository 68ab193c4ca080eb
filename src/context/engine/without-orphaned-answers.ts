import type { ModelMessage } from 'ai';

/**
 * `tail` without the tool results and approval responses whose call or request is in neither `context` nor `tail`
 * (a tool message left empty goes). When `prepareStep` runs alone, the AI SDK may already have added results after
 * the stored message whose calls they answer (an approved call it ran before the first step); when that message's
 * round did not fit the budget, the results go with it rather than reach the model without their call.
 */
export function withoutOrphanedAnswers(
  context: readonly ModelMessage[],
  tail: readonly ModelMessage[],
): ModelMessage[] {
  const calls = new Set<string>();
  const requests = new Set<string>();
  for (const message of [...context, ...tail])
    if (message.role === 'assistant' && typeof message.content !== 'string')
      for (const part of message.content)
        if (part.type === 'tool-call') calls.add(part.toolCallId);
        else if (part.type === 'tool-approval-request') requests.add(part.approvalId);
  return tail.flatMap((message): ModelMessage[] => {
    if (message.role !== 'tool') return [message];
    const content = message.content.filter((part) =>
      part.type === 'tool-result'
        ? calls.has(part.toolCallId)
        : part.type === 'tool-approval-response'
          ? requests.has(part.approvalId)
          : true,
    );
    if (content.length === message.content.length) return [message];
    return content.length > 0 ? [{ ...message, content }] : [];
  });
}
