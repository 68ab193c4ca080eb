import type { MessageRole } from './stored-rows.js';

/**
 * One part of a stored `UIMessage` as the context engine reads it: a `type` tag plus the part's own fields
 * (`text`, `toolCallId`, `state`, `input`, `output`, …). Kept structural so that `src/context` needs no `ai`.
 */
export type ContextUIPart = { type: string; [key: string]: unknown };

/**
 * The shape of an AI SDK `UIMessage` that the context engine reads. Every `UIMessage` from `ai` (and every
 * message the store returns) fits it.
 */
export interface ContextUIMessage {
  /** The client's message id. */
  id: string;
  /** Who wrote the message. */
  role: MessageRole;
  /** The message's parts, in order. */
  parts: ContextUIPart[];
  /** Application metadata (usage, timestamps, …); the engine never reads it. */
  metadata?: unknown;
}

/** True for a static (`tool-${name}`) or dynamic (`dynamic-tool`) tool part. */
export function isToolUIPart(part: ContextUIPart): boolean {
  return part.type === 'dynamic-tool' || part.type.startsWith('tool-');
}

/** The tool name of a static or dynamic tool part. */
export function getToolUIPartName(part: ContextUIPart): string {
  return part.type === 'dynamic-tool' ? String(part.toolName ?? '') : part.type.slice('tool-'.length);
}
