import type { ModelMessage } from 'ai';
import type { ContextSummarizerInput } from '../contracts/context-summarizer.js';
import { toolOutputText } from './preview-tool-output.js';

/** The sections every summary has, in order. */
export const summarySections = ['Goals', 'Decisions', 'Facts', 'Completed actions', 'Open tasks'] as const;

/**
 * Renders messages as a plain transcript for the summarizer: `[user]`, `[assistant]`, `[tool call name]`
 * input, `[tool result name]` output, each tool input and output cut to `toolOutputCharacters`. Reasoning is
 * left out; files show as `[file media/type name]`.
 */
export function renderSummaryTranscript({
  messages,
  toolOutputCharacters = 2000,
}: {
  messages: readonly ModelMessage[];
  toolOutputCharacters?: number;
}): string {
  const lines: string[] = [];
  const cut = (text: string) =>
    text.length > toolOutputCharacters
      ? `${text.slice(0, toolOutputCharacters)} […${text.length - toolOutputCharacters} more characters]`
      : text;
  for (const message of messages) {
    if (typeof message.content === 'string') {
      lines.push(`[${message.role}] ${message.content}`);
      continue;
    }
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
          lines.push(`[${message.role}] ${part.text}`);
          break;
        case 'file':
          lines.push(`[${message.role}] [file ${part.mediaType}${part.filename ? ` ${part.filename}` : ''}]`);
          break;
        case 'tool-call':
          lines.push(`[tool call ${part.toolName}] ${cut(JSON.stringify(part.input) ?? '')}`);
          break;
        case 'tool-result':
          lines.push(`[tool result ${part.toolName}] ${cut(toolOutputText(part.output))}`);
          break;
        case 'tool-approval-response':
          lines.push(
            `[tool approval] ${part.approved ? 'approved' : 'denied'}${part.reason ? `: ${part.reason}` : ''}`,
          );
          break;
        default:
          break;
      }
    }
  }
  return lines.join('\n');
}

/**
 * The prompt for a summarizer model: instructions that fix the five sections (Goals, Decisions, Facts,
 * Completed actions, Open tasks) and forbid nesting the previous summary, and a prompt with the previous
 * summary and the new messages. Incremental: the model merges, it never summarizes a summary of a summary.
 */
export function buildSummaryPrompt(
  input: Pick<
    ContextSummarizerInput,
    'previousSummary' | 'transcript' | 'fromSequence' | 'throughSequence' | 'maxOutputTokens'
  >,
): { instructions: string; prompt: string } {
  const instructions = [
    'You maintain the running summary of a conversation between a user and an AI assistant that uses tools.',
    'The summary replaces the messages it covers, so it must keep everything needed to continue the work:',
    'names, numbers, identifiers, file paths, URLs, decisions and their reasons, what was done and what is still open.',
    '',
    'Write the summary in exactly these Markdown sections, in this order:',
    ...summarySections.map((section) => `## ${section}`),
    '',
    'Rules:',
    '- Merge the previous summary and the new messages into one summary. Do not nest, quote or summarize the previous summary as a whole.',
    '- Keep every fact of the previous summary unless the new messages change it.',
    '- List completed tool actions with their outcome, so that they are not repeated.',
    '- Write "None." under a section with nothing to say.',
    '- Do not invent anything, do not address the user, and write nothing outside the sections.',
    `- Stay under ${input.maxOutputTokens} tokens.`,
  ].join('\n');
  const prompt = [
    input.previousSummary
      ? `<previous-summary>\n${input.previousSummary}\n</previous-summary>\n`
      : '<previous-summary>None.</previous-summary>\n',
    `<messages from-sequence="${input.fromSequence}" through-sequence="${input.throughSequence}">`,
    input.transcript,
    '</messages>',
    '',
    'Write the updated summary now.',
  ].join('\n');
  return { instructions, prompt };
}
