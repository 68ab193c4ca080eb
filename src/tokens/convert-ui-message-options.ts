import type { FilePart, TextPart, ToolResultPart } from 'ai';
import type { ContextUIPart } from '../model/context-ui-message.js';

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

/** Options of `convertUIMessageToModelMessages`. */
export interface ConvertUIMessageOptions {
  /**
   * Turns a tool's stored output into what the model sees (the AI SDK's `tool.toModelOutput`). Return
   * undefined for the default: a string becomes `{ type: 'text' }`, anything else `{ type: 'json' }`.
   */
  convertToolOutput?: (input: ToolOutputConversionInput) => ToolResultOutput | undefined;
  /** Turns a `data-*` part into a text or file part; without it data parts are left out (as in the AI SDK). */
  convertDataPart?: (part: ContextUIPart) => TextPart | FilePart | undefined;
}
