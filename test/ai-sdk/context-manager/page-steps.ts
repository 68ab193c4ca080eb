// The model's steps of the prompt-cache tests, for `MockLanguageModelV4({ doGenerate })`: a call of `toolName` for
// one page (`call-<page>`), and the closing answer.
const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A step that calls `toolName` for `page`. */
export const pageCallStep = (toolName: string, page: number) => ({
  content: [{ type: 'tool-call' as const, toolCallId: `call-${page}`, toolName, input: `{"page":${page}}` }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' },
  usage,
  warnings: [],
});

/** The step that ends the loop with a short text. */
export const answerStep = {
  content: [{ type: 'text' as const, text: 'Read.' }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage,
  warnings: [],
};
