import type { StoredMessagePart } from '../schema/define-agent-tables.js';
import type { TokenCounter } from './token-counter.js';

/**
 * The raw token count of a message's parts, as the model will read them: text and reasoning as text, tool
 * parts as name + JSON input + output or error, data parts as JSON. Step markers, sources and files count 0
 * here (file and image pricing is the model profile's business, applied when the budget is computed).
 */
export function countPartTokens(parts: readonly StoredMessagePart[], counter: TokenCounter): number {
  let total = 0;
  for (const part of parts) total += counter.count(partText(part));
  return total;
}

function partText(part: StoredMessagePart): string {
  const { type } = part;
  if (type === 'text' || type === 'reasoning') return String(part.text ?? '');
  if (type === 'step-start' || type === 'source-url' || type === 'source-document' || type === 'file') return '';
  if (type === 'dynamic-tool' || type.startsWith('tool-')) {
    const name = type === 'dynamic-tool' ? String(part.toolName ?? '') : type.slice('tool-'.length);
    const output = part.output !== undefined ? json(part.output) : part.errorText !== undefined ? String(part.errorText) : '';
    return `${name} ${json(part.input)} ${output}`;
  }
  return json(part);
}

function json(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
