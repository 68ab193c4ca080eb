import { asSchema, jsonSchema, tool, type FlexibleSchema, type Tool } from 'ai';
import { AgentHistoryError } from '../../errors/agent-history-error.js';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { WorkingMemoryConflictError } from '../../errors/working-memory-conflict-error.js';
import type { WorkingMemoryStore } from '../../model/context-store.js';
import { workingMemoryInputSchema, type UpdateWorkingMemoryInput } from './working-memory-input-schema.js';

/** Options of {@link createUpdateWorkingMemoryTool}. */
export interface CreateUpdateWorkingMemoryToolOptions<DOCUMENT = unknown> {
  /** The working memory it writes: the user's (or the thread's) store, for example the in-memory store or the Postgres store's. */
  store: WorkingMemoryStore;
  /**
   * The document's shape (a zod schema, or any schema the AI SDK takes): the model then writes it as an object, the
   * tool checks it and stores it as JSON. Without it, the document is free Markdown.
   * @default free Markdown
   */
  schema?: FlexibleSchema<DOCUMENT>;
  /**
   * The longest document stored, in characters (the Markdown, or the JSON text): a longer one is refused as the
   * tool's error and nothing is written.
   * @default 16000
   */
  maxCharacters?: number;
  /** The tool's description for the model. @default a description of the working memory and its versions */
  description?: string;
}

/** What the tool returns to the model when it saved the document. */
export interface UpdateWorkingMemoryResult {
  /** The version saved: the next call passes it as `expectedVersion`. */
  version: number;
}

const defaultDescription =
  'Replace the working memory: what you keep about the user across conversations (preferences, facts, goals). ' +
  'Pass the whole new document and the version shown in the working memory message (0 when there is none). ' +
  'Keep what still holds; it is shown to you in every conversation.';

/**
 * The `updateWorkingMemory` tool for the AI SDK (`tools: { updateWorkingMemory: createUpdateWorkingMemoryTool(...) }`):
 * the model replaces the working memory document, passing the version it saw (optimistic concurrency). A stale
 * version writes nothing and returns a {@link WorkingMemoryConflictError} as the tool's error, with the current
 * version and content, so the model can merge and call again; input that does not match the schema or is too long
 * is refused the same way. The context engine shows the document in the next model calls.
 *
 * @example
 * const tools = { updateWorkingMemory: createUpdateWorkingMemoryTool({ store }) };
 */
export function createUpdateWorkingMemoryTool<DOCUMENT = unknown>({
  store,
  schema,
  maxCharacters = 16_000,
  description = defaultDescription,
}: CreateUpdateWorkingMemoryToolOptions<DOCUMENT>): Tool<
  UpdateWorkingMemoryInput<DOCUMENT>,
  UpdateWorkingMemoryResult
> {
  if (!Number.isSafeInteger(maxCharacters) || maxCharacters < 1)
    throw new InvalidArgumentError({
      argument: 'maxCharacters',
      value: maxCharacters,
      message: 'expected an integer of at least 1.',
    });
  const document = schema === undefined ? undefined : asSchema(schema);
  return tool({
    description,
    inputSchema: jsonSchema<UpdateWorkingMemoryInput<DOCUMENT>>(
      () => workingMemoryInputSchema(document, maxCharacters),
      {
        validate: (value) => validateInput(value, document, maxCharacters),
      },
    ),
    execute: async (input) => {
      const content = 'document' in input ? JSON.stringify(input.document) : input.content;
      try {
        const saved = await store.updateWorkingMemory({ content, expectedVersion: input.expectedVersion });
        return { version: saved.version };
      } catch (error) {
        if (!isVersionConflict(error)) throw error;
        const current = await store.getWorkingMemory();
        throw new WorkingMemoryConflictError({
          expectedVersion: input.expectedVersion,
          actualVersion: current?.version ?? 0,
          currentContent: current?.content ?? '',
        });
      }
    },
  });
}

// A store built on another copy of this package throws its own class; the code identifies the error then.
function isVersionConflict(error: unknown): boolean {
  return AgentHistoryError.isInstance(error) && error.code === 'version-conflict';
}

async function validateInput<DOCUMENT>(
  value: unknown,
  document: ReturnType<typeof asSchema<DOCUMENT>> | undefined,
  maxCharacters: number,
): Promise<{ success: true; value: UpdateWorkingMemoryInput<DOCUMENT> } | { success: false; error: Error }> {
  const fail = (argument: string, bad: unknown, message: string) => ({
    success: false as const,
    error: new InvalidArgumentError({ argument, value: bad, message }),
  });
  const input = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (!Number.isSafeInteger(input.expectedVersion) || (input.expectedVersion as number) < 0)
    return fail(
      'expectedVersion',
      input.expectedVersion,
      'expected the version shown in the working memory (0 when none).',
    );
  const expectedVersion = input.expectedVersion as number;
  if (!document) {
    if (typeof input.content !== 'string') return fail('content', input.content, 'expected the Markdown document.');
    if (input.content.length > maxCharacters)
      return fail(
        'content',
        input.content,
        `expected at most ${maxCharacters} characters (it has ${input.content.length}).`,
      );
    return { success: true, value: { expectedVersion, content: input.content } as UpdateWorkingMemoryInput<DOCUMENT> };
  }
  const checked = document.validate
    ? await document.validate(input.document)
    : { success: true as const, value: input.document as DOCUMENT };
  if (!checked.success)
    return fail('document', input.document, `does not match the working memory's schema: ${checked.error.message}`);
  const length = JSON.stringify(checked.value).length;
  if (length > maxCharacters)
    return fail('document', input.document, `expected at most ${maxCharacters} characters of JSON (it has ${length}).`);
  return { success: true, value: { expectedVersion, document: checked.value } as UpdateWorkingMemoryInput<DOCUMENT> };
}
