import { asSchema, type ToolSet } from 'ai';
import type { ToolDefinition } from '../../tokens/tool-definition-tokens.js';

/**
 * The definitions of AI SDK tools as plain JSON: name, description and `asSchema(tool.inputSchema).jsonSchema`
 * (zod 3 and 4, `jsonSchema()` and Standard Schema alike). A tool whose schema cannot be derived counts with `{}`.
 */
export async function toolDefinitionsOf(tools: ToolSet): Promise<ToolDefinition[]> {
  return Promise.all(
    Object.entries(tools).map(async ([name, tool]) => {
      let inputSchema: unknown = {};
      try {
        if (tool.inputSchema !== undefined) inputSchema = await asSchema(tool.inputSchema).jsonSchema;
      } catch {
        inputSchema = {};
      }
      return { name, description: typeof tool.description === 'string' ? tool.description : undefined, inputSchema };
    }),
  );
}
