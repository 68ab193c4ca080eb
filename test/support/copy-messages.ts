import type { ModelMessage } from 'ai';

/**
 * Deep copies of messages, as a caller or a framework may hand them back: every object and array new, URLs, dates
 * and binary data copied too (`structuredClone` refuses a URL).
 */
export function copyMessages(messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message) => copyValue(message) as ModelMessage);
}

function copyValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof URL) return new URL(value.href);
  if (value instanceof Date) return new Date(value.getTime());
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (Array.isArray(value)) return value.map(copyValue);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copyValue(item)]));
}
