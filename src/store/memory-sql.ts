import { sql, type SQL } from 'drizzle-orm';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { MemoryEmbedder } from '../model/memory-embedder.js';
import type { StoreContext } from './store-context.js';

/** The most dimensions an embedding may have (pgvector's limit for an indexed vector is lower still). */
export const MAX_EMBEDDING_DIMENSIONS = 16_000;

/** A message's text parts joined by a line break (reasoning and tool traffic left out), as recall shows them. */
export function messageTextOf(context: StoreContext): SQL {
  const { agentMessage } = context.tables;
  return sql`coalesce((select string_agg(part.value #>> '{}', E'\n') from jsonb_array_elements(jsonb_path_query_array(${agentMessage.parts}::jsonb, 'strict $[*] ? (@.type == "text").text')) as part), '')`;
}

/**
 * The lineage of every message of `thread` (a fork's copy and its original share one): recall leaves out what the
 * thread already holds. A CTE named `seen`, every table filtered by its own tenant.
 */
export function seenInThread(context: StoreContext, thread: string): SQL {
  const { agentMessage } = context.tables;
  return sql`seen as (select coalesce(${agentMessage.sourceMessageId}, ${agentMessage.id}) as lineage from ${agentMessage} where ${agentMessage.tenantId} = ${context.tenantId} and ${agentMessage.threadId} = ${thread})`;
}

/** The messages recall may return: completed user and assistant messages that reach the model, in live threads. */
export function recallableMessage(context: StoreContext): SQL {
  const { agentMessage, agentThread } = context.tables;
  return sql`${agentMessage.role} in ('user', 'assistant') and ${agentMessage.status} = 'completed' and ${agentMessage.contextState} = 'eligible' and ${agentMessage.deletedAt} is null and ${agentThread.deletedAt} is null`;
}

/**
 * Exact cosine similarity between the row's embedding and `vector` (a `real[]` literal), in SQL: works on
 * PostgreSQL, PGlite and Citus without an extension. Null for a zero vector.
 */
export function cosineSimilarity(context: StoreContext, vector: string): SQL {
  const { agentMemory } = context.tables;
  return sql`(select sum(pair.a * pair.b) / nullif(sqrt(sum(pair.a * pair.a)) * sqrt(sum(pair.b * pair.b)), 0) from unnest(${agentMemory.embedding}, ${vector}::real[]) as pair(a, b))`;
}

/** Calls the embedder and checks what it returned: one vector of finite numbers per text, all of one length. */
export async function embedTexts(embedder: MemoryEmbedder, texts: string[]): Promise<number[][]> {
  const vectors = await embedder.embed(texts);
  const dimensions = Array.isArray(vectors) && Array.isArray(vectors[0]) ? vectors[0].length : 0;
  const valid =
    Array.isArray(vectors) &&
    vectors.length === texts.length &&
    dimensions > 0 &&
    dimensions <= MAX_EMBEDDING_DIMENSIONS &&
    vectors.every(
      (vector) =>
        Array.isArray(vector) &&
        vector.length === dimensions &&
        vector.every((value) => typeof value === 'number' && Number.isFinite(value)),
    );
  if (!valid)
    throw new InvalidArgumentError({
      argument: 'embedder',
      value: Array.isArray(vectors) ? `${vectors.length} vectors for ${texts.length} texts` : vectors,
      message: `expected one vector per text, each of the same 1 to ${MAX_EMBEDDING_DIMENSIONS} finite numbers.`,
    });
  return vectors;
}

/** A vector as a Postgres array literal (`{0.1,0.2}`), sent as one text parameter. */
export function realArrayLiteral(vector: readonly number[]): string {
  return `{${vector.map((value) => String(Math.fround(value))).join(',')}}`;
}

/** Checks an embedder option: an object with a non-empty `modelId` and an `embed` function. */
export function assertEmbedder(argument: string, embedder: unknown): MemoryEmbedder {
  const candidate = embedder as Partial<MemoryEmbedder> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.embed !== 'function' ||
    typeof candidate.modelId !== 'string' ||
    candidate.modelId.length === 0 ||
    candidate.modelId.length > 200
  )
    throw new InvalidArgumentError({
      argument,
      value: embedder,
      message:
        'expected { modelId, embed(texts) }: createMemoryEmbedder({ model }) from agent-history/ai-sdk makes one.',
    });
  return candidate as MemoryEmbedder;
}
