/** A message of a model prompt, as the AI SDK hands it to a provider (`doStreamCalls[i].prompt`) or as a `ModelMessage`. */
interface PromptMessage {
  role: string;
  content: unknown;
}

/**
 * The tool calls of a prompt that have no result after them, and the results that answer no earlier call. A
 * provider rejects either (the 400s of peers.md §4 A). Empty arrays mean the prompt is well-formed.
 */
export function unpairedToolParts(messages: readonly PromptMessage[]): {
  callsWithoutResult: string[];
  resultsWithoutCall: string[];
} {
  const open = new Set<string>();
  const called = new Set<string>();
  const resultsWithoutCall: string[] = [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string }>) {
      if (part.type === 'tool-call' && part.toolCallId) {
        open.add(part.toolCallId);
        called.add(part.toolCallId);
      } else if (part.type === 'tool-result' && part.toolCallId) {
        if (!called.has(part.toolCallId)) resultsWithoutCall.push(part.toolCallId);
        open.delete(part.toolCallId);
      }
    }
  }
  return { callsWithoutResult: [...open], resultsWithoutCall };
}
