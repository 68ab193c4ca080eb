import type { UIMessage } from 'ai';

/** The `errorText` given to a tool call that an interrupted answer left without a result. */
export const INTERRUPTED_TOOL_ERROR = 'The answer was interrupted before this tool call finished.';

/**
 * Makes the parts of an interrupted (cancelled or failed) answer safe to keep and to replay: a text or
 * reasoning part still `streaming` becomes `done`, and a tool call left without a result (`input-streaming`,
 * `input-available`) becomes `output-error`. A dangling tool call would otherwise make every later request
 * of the thread fail with `MissingToolResultsError`. Everything else is kept as it is.
 */
export function settleInterruptedParts<PART extends UIMessage['parts'][number]>(
  parts: PART[],
  errorText = INTERRUPTED_TOOL_ERROR,
): PART[] {
  return parts.map((part) => {
    const record = part as { type: string; state?: string; [key: string]: unknown };
    if ((record.type === 'text' || record.type === 'reasoning') && record.state === 'streaming') {
      return { ...record, state: 'done' } as PART;
    }
    const isTool = record.type === 'dynamic-tool' || record.type.startsWith('tool-');
    if (isTool && (record.state === 'input-streaming' || record.state === 'input-available')) {
      const { rawInput: _rawInput, inputEncoding: _inputEncoding, ...rest } = record;
      return { ...rest, state: 'output-error', input: record.input, errorText } as PART;
    }
    return part;
  });
}
