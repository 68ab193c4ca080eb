import type { AssistantContent, FilePart, ModelMessage, TextPart, ToolApprovalResponse, ToolResultPart } from 'ai';
import {
  getToolUIPartName,
  isToolUIPart,
  type ContextUIMessage,
  type ContextUIPart,
} from '../model/context-ui-message.js';

/** What the model sees of a tool's result (`ToolResultPart['output']`; `ai` exports no name for it). */
export type ToolResultOutput = ToolResultPart['output'];

/** Input of {@link ConvertUIMessageOptions.convertToolOutput}. */
export interface ToolOutputConversionInput {
  /** The tool's name. */
  toolName: string;
  /** The call's id. */
  toolCallId: string;
  /** The call's input. */
  input: unknown;
  /** The stored output of an `output-available` part. */
  output: unknown;
}

/** Options of {@link convertUIMessageToModelMessages}. */
export interface ConvertUIMessageOptions {
  /**
   * Turns a tool's stored output into what the model sees (the AI SDK's `tool.toModelOutput`). Return
   * undefined for the default: a string becomes `{ type: 'text' }`, anything else `{ type: 'json' }`.
   */
  convertToolOutput?: (input: ToolOutputConversionInput) => ToolResultOutput | undefined;
  /** Turns a `data-*` part into a text or file part; without it data parts are left out (as in the AI SDK). */
  convertDataPart?: (part: ContextUIPart) => TextPart | FilePart | undefined;
}

type Part = ContextUIPart & Record<string, any>;

/**
 * Converts one stored `UIMessage` into model messages, following the AI SDK's `convertToModelMessages` rules
 * (ai-sdk-v7.md §3) for a single message: an assistant message is split at `step-start` into
 * `assistant{reasoning, text, file, tool-call, tool-approval-request}` + `tool{tool-result, tool-approval-response}`
 * blocks; `source-*` and `step-start` parts are dropped; `input-streaming` tool parts are skipped. The rules
 * that look across messages (superseded approval requests, incomplete calls) are applied before, by
 * {@link filterStoredMessages}, so that every model message keeps the sequence of the message it came from.
 * Synchronous, and it never copies large values: outputs are shared with the stored parts.
 *
 * Why not `convertToModelMessages` from `ai`: its output is the same (a test compares both on every part kind),
 * but (1) the store counts tokens at write time through this function and the main entry must run without
 * `ai`, an optional peer; (2) `ai` v7's function is async, and the store and the engine convert one message at
 * a time synchronously; (3) it converts a whole array and applies the cross-message rules itself, so a model
 * message no longer says which stored sequence it came from, which the engine needs for trimming, snapshots and
 * summaries; (4) it deep-copies tool outputs: measured on 20 turns with a 2,000-row tool output each, 46 ms
 * against 0.06 ms here (200 small turns: 3.8 to 8.6 ms against 5.4 ms), on every `prepareStep`.
 */
export function convertUIMessageToModelMessages(
  message: ContextUIMessage,
  options: ConvertUIMessageOptions = {},
): ModelMessage[] {
  const parts = message.parts as Part[];
  switch (message.role) {
    case 'system': {
      const texts = parts.filter((part) => part.type === 'text');
      const providerOptions = texts.reduce(
        (merged, part) => (part.providerMetadata ? { ...merged, ...part.providerMetadata } : merged),
        {},
      );
      return [
        {
          role: 'system',
          content: texts.map((part) => String(part.text)).join(''),
          ...(Object.keys(providerOptions).length > 0 ? { providerOptions } : {}),
        },
      ];
    }
    case 'user': {
      const content: Array<TextPart | FilePart> = [];
      for (const part of parts) {
        if (part.type === 'text' || part.type === 'file') content.push(convertUserContentPart(part));
        else if (part.type.startsWith('data-')) {
          const converted = options.convertDataPart?.(part);
          if (converted) content.push(converted);
        }
      }
      return [{ role: 'user', content }];
    }
    case 'assistant':
      return convertAssistant(parts, options);
    default:
      return [];
  }
}

function convertAssistant(parts: Part[], options: ConvertUIMessageOptions): ModelMessage[] {
  const messages: ModelMessage[] = [];
  let block: Part[] = [];
  const flush = () => {
    if (block.length > 0) messages.push(...convertBlock(block, options));
    block = [];
  };
  for (const part of parts) {
    if (part.type === 'step-start') flush();
    else if (part.type === 'steering-message') {
      flush();
      messages.push({ role: 'user', content: ((part.parts as Part[]) ?? []).map(convertUserContentPart) });
    } else if (
      part.type === 'text' ||
      part.type === 'reasoning' ||
      part.type === 'reasoning-file' ||
      part.type === 'file' ||
      part.type === 'custom' ||
      part.type.startsWith('data-') ||
      isToolUIPart(part)
    ) {
      block.push(part);
    }
  }
  flush();
  return messages;
}

function convertBlock(block: Part[], options: ConvertUIMessageOptions): ModelMessage[] {
  const messages: ModelMessage[] = [];
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
  if (content.length > 0) messages.push({ role: 'assistant', content });

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
  if (results.length > 0) messages.push({ role: 'tool', content: results });
  return messages;
}

function toolOutput(part: Part, toolName: string, options: ConvertUIMessageOptions): ToolResultOutput {
  const converted = options.convertToolOutput?.({
    toolName,
    toolCallId: part.toolCallId,
    input: part.input,
    output: part.output,
  });
  if (converted) return converted;
  if (part.type === 'dynamic-tool' && part.dynamic === false) {
    return { type: 'text', value: 'Tool output omitted because the tool is no longer available.' };
  }
  const output = part.output;
  return typeof output === 'string'
    ? { type: 'text', value: output }
    : { type: 'json', value: output === undefined ? null : output };
}

function convertUserContentPart(part: Part): TextPart | FilePart {
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
