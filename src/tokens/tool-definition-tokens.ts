import type { ModelProfile } from './model-profile.js';
import type { TokenCounter } from './token-counter.js';

/** A tool as the model sees it: name, description and the JSON schema of its input. */
export interface ToolDefinition {
  /** The tool's name. */
  name: string;
  /** The tool's description, if any. */
  description?: string;
  /** The input's JSON schema (plain JSON; `src/ai-sdk` derives it with `asSchema(tool.inputSchema).jsonSchema`). */
  inputSchema?: unknown;
}

/**
 * The raw tokens of tool definitions: name, description and the JSON schema as JSON. Providers render schemas
 * more compactly than JSON, so this is conservative.
 */
export function countToolDefinitionTokens({
  tools,
  tokenCounter,
}: {
  tools: readonly ToolDefinition[];
  tokenCounter: TokenCounter;
}): number {
  let total = 0;
  for (const tool of tools) {
    total +=
      tokenCounter.count(tool.name) +
      tokenCounter.count(tool.description ?? '') +
      tokenCounter.count(JSON.stringify(tool.inputSchema ?? {}) ?? '');
  }
  return total;
}

/** Model-estimated tokens of tool definitions: the raw count scaled, plus per-tool framing and the tools preamble. */
export function estimateToolDefinitionTokens({
  rawTokens,
  toolCount,
  profile,
  calibration = 1,
}: {
  rawTokens: number;
  toolCount: number;
  profile: ModelProfile;
  calibration?: number;
}): number {
  if (toolCount === 0) return 0;
  return (
    Math.ceil(rawTokens * profile.tokenizerFactor * calibration) +
    toolCount * profile.perToolTokens +
    profile.toolsPreambleTokens
  );
}
