import type { AssistantContent, FilePart, ModelMessage, TextPart, ToolApprovalResponse, ToolResultPart } from 'ai';
import { getToolUIPartName, isToolUIPart, type ContextUIPart } from '../model/context-ui-message.js';
import type { ConvertUIMessageOptions, ToolResultOutput } from './convert-ui-message-options.js';

/** A stored part, read loosely: the parts come from the database, their fields are checked where they are used. */
export type Part = ContextUIPart & Record<string, any>;

/**
 * Converts the parts of one assistant step (between two `step-start` parts) into an `assistant` message and a
 * `tool` message, leaving out the one that would be empty.
 */
export function convertAssistantStep(block: Part[], options: ConvertUIMessageOptions): ModelMessage[] {
  const messages: ModelMessage[] = [];
  const content = assistantContent(block, options);
  if (content.length > 0) messages.push({ role: 'assistant', content });
  const results = toolResults(block, options);
  if (results.length > 0) messages.push({ role: 'tool', content: results });
  return messages;
}

/** The assistant message of one step: its text, reasoning, files, tool calls and provider-executed results. */
function assistantContent(block: Part[], options: ConvertUIMessageOptions): Exclude<AssistantContent, string> {
  const content: Exclude<AssistantContent, string> = [];
  for (const part of block) {
    if (part.type === 'text')
      content.push({ type: 'text', text: String(part.text ?? ''), ...withProviderOptions(part.providerMetadata) });
    else if (part.type === 'custom')
      content.push({ type: 'custom', kind: part.kind, ...withProviderOptions(part.providerMetadata) });
    else if (part.type === 'file')
      content.push({
        type: 'file',
        mediaType: part.mediaType,
        ...(part.filename !== undefined ? { filename: part.filename } : {}),
        data: fileData(part),
        ...withProviderOptions(part.providerMetadata),
      });
    else if (part.type === 'reasoning-file')
      content.push({
        type: 'reasoning-file',
        data: { type: 'url', url: new URL(part.url) },
        mediaType: part.mediaType,
        ...withProviderOptions(part.providerMetadata),
      });
    else if (part.type === 'reasoning')
      content.push({ type: 'reasoning', text: String(part.text ?? ''), ...withProviderOptions(part.providerMetadata) });
    else if (part.type.startsWith('data-')) {
      const converted = options.convertDataPart?.(part);
      if (converted) content.push(converted);
    } else if (isToolUIPart(part) && part.state !== 'input-streaming') {
      const toolName = getToolUIPartName(part);
      const callProviderMetadata =
        part.callProviderMetadata ?? (part.state === 'output-error' ? part.resultProviderMetadata : undefined);
      content.push({
        type: 'tool-call',
        toolCallId: part.toolCallId,
        toolName,
        input: part.state === 'output-error' ? (part.input ?? part.rawInput) : part.input,
        ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
        ...withProviderOptions(callProviderMetadata),
      });
      if (part.approval != null) {
        content.push({
          type: 'tool-approval-request',
          approvalId: part.approval.id,
          toolCallId: part.toolCallId,
          ...(part.approval.isAutomatic !== undefined ? { isAutomatic: part.approval.isAutomatic } : {}),
          ...(part.approval.requestReason != null ? { reason: part.approval.requestReason } : {}),
          ...(Object.prototype.hasOwnProperty.call(part.approval, 'inputSchemaInput')
            ? { inputSchemaInput: part.approval.inputSchemaInput }
            : {}),
          ...(part.approval.signature != null ? { signature: part.approval.signature } : {}),
        });
      }
      if (
        part.providerExecuted === true &&
        part.state !== 'approval-responded' &&
        (part.state === 'output-available' || part.state === 'output-error')
      ) {
        content.push({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName,
          output:
            part.state === 'output-error'
              ? { type: 'error-json', value: part.errorText ?? null }
              : toolOutput(part, toolName, options),
          ...withProviderOptions(part.resultProviderMetadata ?? part.callProviderMetadata),
        });
      }
    }
  }
  return content;
}

/** The tool message of one step: the results and approval responses of the calls the client ran. */
function toolResults(block: Part[], options: ConvertUIMessageOptions): Array<ToolResultPart | ToolApprovalResponse> {
  const results: Array<ToolResultPart | ToolApprovalResponse> = [];
  for (const part of block) {
    if (!isToolUIPart(part) || (part.providerExecuted === true && part.approval?.approved == null)) continue;
    const toolName = getToolUIPartName(part);
    if (part.approval?.approved != null) {
      results.push({
        type: 'tool-approval-response',
        approvalId: part.approval.id,
        approved: part.approval.approved,
        ...(part.approval.reason !== undefined ? { reason: part.approval.reason } : {}),
        ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
      });
    }
    if (part.state === 'approval-responded' && part.approval?.approved === false) {
      results.push({
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName,
        output: {
          type: 'execution-denied',
          ...(part.approval.reason !== undefined ? { reason: part.approval.reason } : {}),
        },
        ...withProviderOptions(part.callProviderMetadata),
      });
    }
    if (part.providerExecuted === true) continue;
    if (part.state === 'output-denied') {
      results.push({
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName,
        output: { type: 'error-text', value: part.approval?.reason ?? 'Tool call execution denied.' },
        ...withProviderOptions(part.callProviderMetadata),
      });
    } else if (part.state === 'output-error') {
      results.push({
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName,
        output: { type: 'error-text', value: String(part.errorText ?? '') },
        ...withProviderOptions(part.callProviderMetadata),
      });
    } else if (part.state === 'output-available') {
      results.push({
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName,
        output: toolOutput(part, toolName, options),
        ...withProviderOptions(part.callProviderMetadata),
      });
    }
  }
  return results;
}

function toolOutput(part: Part, toolName: string, options: ConvertUIMessageOptions): ToolResultOutput {
  const converted = options.convertToolOutput?.({
    toolName,
    toolCallId: part.toolCallId,
    input: part.input,
    output: part.output,
  });
  if (converted) return converted;
  if (isUnavailableToolPart(part) && !options.availableTools?.includes(toolName)) {
    return { type: 'text', value: 'Tool output omitted because the tool is no longer available.' };
  }
  const output = part.output;
  return typeof output === 'string'
    ? { type: 'text', value: output }
    : { type: 'json', value: output === undefined ? null : output };
}

/** A tool part stored while its tool was missing (the AI SDK marks it `dynamic: false`). */
export function isUnavailableToolPart(part: { type: string; dynamic?: unknown }): boolean {
  return part.type === 'dynamic-tool' && part.dynamic === false;
}

/** A text or file part of a user message (or of a steering message inside an assistant one). */
export function convertUserContentPart(part: Part): TextPart | FilePart {
  if (part.type === 'text')
    return { type: 'text', text: String(part.text ?? ''), ...withProviderOptions(part.providerMetadata) };
  return {
    type: 'file',
    mediaType: part.mediaType,
    ...(part.filename !== undefined ? { filename: part.filename } : {}),
    data: fileData(part),
    ...withProviderOptions(part.providerMetadata),
  };
}

function fileData(part: Part): FilePart['data'] {
  return part.providerReference != null
    ? { type: 'reference', reference: part.providerReference }
    : { type: 'url', url: new URL(part.url) };
}

function withProviderOptions(providerMetadata: unknown): { providerOptions?: any } {
  return providerMetadata != null ? { providerOptions: providerMetadata } : {};
}
