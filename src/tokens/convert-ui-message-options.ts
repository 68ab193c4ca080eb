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
  /**
   * The names of the tools the model has now. A tool part stored as unavailable (a `dynamic-tool` part with
   * `dynamic: false`: its tool was missing when the message was validated) is sent with its output when its tool is
   * among them, and with "Tool output omitted because the tool is no longer available." otherwise, as
   * `convertToModelMessages({ tools })` does. @default none: every such part's output is omitted
   */
  availableTools?: readonly string[];
  /** Turns a `data-*` part into a text or file part; without it data parts are left out (as in the AI SDK). */
  convertDataPart?: (part: ContextUIPart) => TextPart | FilePart | undefined;
}
