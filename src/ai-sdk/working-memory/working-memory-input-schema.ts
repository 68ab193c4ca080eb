import type { JSONSchema7, Schema } from 'ai';

/** What the model passes to the `updateWorkingMemory` tool: the version it saw and the whole new document. */
export type UpdateWorkingMemoryInput<DOCUMENT = unknown> =
  { expectedVersion: number; content: string } | { expectedVersion: number; document: DOCUMENT };

/** The tool's input as a JSON schema: the version and the Markdown `content`, or the app's `document`. */
export async function workingMemoryInputSchema(
  document: Schema<unknown> | undefined,
  maxCharacters: number,
): Promise<JSONSchema7> {
  const expectedVersion: JSONSchema7 = {
    type: 'integer',
    minimum: 0,
    description: 'The version shown in the working memory message (0 when there is none).',
  };
  const body: Record<string, JSONSchema7> = document
    ? { document: { ...(await document.jsonSchema), description: 'The whole new working memory document.' } }
    : {
        content: {
          type: 'string',
          maxLength: maxCharacters,
          description: 'The whole new working memory, in Markdown.',
        },
      };
  return {
    type: 'object',
    properties: { expectedVersion, ...body },
    required: ['expectedVersion', ...Object.keys(body)],
    additionalProperties: false,
  };
}
