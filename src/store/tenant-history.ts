import type { ContextArtifactOperations } from './context-artifact-operations.js';
import type { DerivedDataOperations } from './derived-data-operations.js';
import type { MemoryOperations } from './memory-operations.js';
import type { MessageOperations } from './message-operations.js';
import type { StreamChunkOperations } from './stream-chunk-operations.js';
import type { ThreadOperations } from './thread-operations.js';

/**
 * The store of one tenant, as `createAgentHistory({ db }).forTenant(tenantId)` returns it: threads, runs, the
 * message log, the assistant message lifecycle, context edits, redaction, retention and the context engine's
 * artifacts, every one scoped to the tenant. Its methods are grouped by area in {@link ThreadOperations},
 * {@link MessageOperations}, {@link ContextArtifactOperations} and {@link StreamChunkOperations}.
 *
 * Every method is async and runs in its own transaction scoped to the tenant (set with `set_config(…, true)`, so a
 * pooled connection never carries it over; the reads and the writes of a chat turn in one statement of a function
 * that does the same). Bad input is refused before any SQL with a typed error naming the value, always as a rejected
 * promise. Another tenant's row is "not found", exactly like a missing one. A statement
 * the database failed, or a lost connection, rejects with `DatabaseError` (the code and the server's message, never
 * the statement's parameters); each method's `@throws` names the other errors.
 *
 * @example
 * const store = createAgentHistory({ db }).forTenant(tenantId);
 * const thread = await store.createThread({ userId: 'u1', title: 'Trip' });
 * await store.appendMessage(thread.id, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] });
 * const { messages } = await store.listMessages(thread.id);
 */
export interface TenantHistory
  extends
    ThreadOperations,
    MessageOperations,
    ContextArtifactOperations,
    StreamChunkOperations,
    DerivedDataOperations,
    MemoryOperations {
  /** The tenant every method acts for: the id given to `forTenant`, lower-cased. */
  readonly tenantId: string;
  /** The user every method is scoped to (`forTenant`'s `userId`), or null for the whole tenant. */
  readonly userId: string | null;
}
