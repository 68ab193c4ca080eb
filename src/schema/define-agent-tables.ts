import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  integer,
  json,
  jsonb,
  pgEnum,
  pgRole,
  pgTable,
  primaryKey,
  real,
  smallint,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
  type PgSchema,
} from 'drizzle-orm/pg-core';
import { tenantIsolationPolicy } from './tenant-policy.js';
import { tsvector } from './tsvector.js';

/** A stored `UIMessage` part. The shape is the AI SDK's; the schema only requires a `type`. */
export type StoredMessagePart = { type: string; [key: string]: unknown };

/** Free-form JSON metadata. */
export type StoredMetadata = Record<string, unknown>;

/** The default name of the application role that every policy applies to. */
export const DEFAULT_APP_ROLE = 'agent_history_app';

/** The values of the `agent_message_role` enum: who wrote a message. */
export const MESSAGE_ROLES = ['system', 'user', 'assistant'] as const;
/** The values of the `agent_message_status` enum: the lifecycle of a stored message. */
export const MESSAGE_STATUSES = ['pending', 'streaming', 'completed', 'failed', 'cancelled'] as const;
/** The values of the `agent_message_context_state` enum: whether a stored message may reach the model. */
export const CONTEXT_STATES = ['eligible', 'excluded', 'redacted'] as const;
/** The values of the `agent_run_status` enum: the lifecycle of a run. */
export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
/** The values of `agent_memory.scope`: whose a memory item is, one user's or one thread's. */
export const MEMORY_SCOPES = ['user', 'thread'] as const;
/**
 * The values of `agent_memory.kind`: a working-memory document, a fact, or a recall index entry (one message's
 * embedding).
 */
export const MEMORY_KINDS = ['working', 'fact', 'recall'] as const;

/** The options of {@link defineAgentTables}. */
export interface DefineAgentTablesOptions {
  /**
   * The Postgres schema to create the tables and enums in.
   * @default the `public` schema
   * @example defineAgentTables({ schema: pgSchema('agent') })
   */
  schema?: PgSchema<string>;
  /**
   * The role that the tenant policies apply to. It is created by the package's migrations (idempotently);
   * the pool's login role must be a member of it.
   * @default 'agent_history_app'
   */
  appRole?: string;
}

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
};

/**
 * Creates the nine agent-history tables, their enums and the application role.
 *
 * Every primary key and unique index starts with `tenant_id` and every foreign key is composite with it, so
 * the tables distribute and co-locate by `tenant_id` on Citus unchanged. Row-level security is enabled on all
 * nine with one tenant-and-user predicate; FORCE, grants and the role itself come from the package's custom migration.
 *
 * @example
 * export const { agentThread, agentMessage } = defineAgentTables({ schema: pgSchema('agent') });
 */
export function defineAgentTables({ schema, appRole = DEFAULT_APP_ROLE }: DefineAgentTablesOptions = {}) {
  const table = (schema ? schema.table.bind(schema) : pgTable) as typeof pgTable;
  const enumType = (schema ? schema.enum.bind(schema) : pgEnum) as typeof pgEnum;
  const role = pgRole(appRole).existing();

  const messageRole = enumType('agent_message_role', MESSAGE_ROLES);
  const messageStatus = enumType('agent_message_status', MESSAGE_STATUSES);
  const contextState = enumType('agent_message_context_state', CONTEXT_STATES);
  const runStatus = enumType('agent_run_status', RUN_STATUSES);

  const agentThread = table(
    'agent_thread',
    {
      tenantId: uuid('tenant_id').notNull(),
      id: uuid('id').notNull().defaultRandom(),
      /** The owner or end user of the thread, in the application's own id format. */
      userId: text('user_id'),
      title: text('title'),
      metadata: jsonb('metadata')
        .$type<StoredMetadata>()
        .notNull()
        .default(sql`'{}'::jsonb`),
      /** The last sequence handed out; the next message gets `next_sequence + 1`. */
      nextSequence: bigint('next_sequence', { mode: 'number' }).notNull().default(0),
      /** When the newest message was appended, or when the thread was created: the thread list's order. */
      lastMessageAt: timestamp('last_message_at', { withTimezone: true }).notNull().defaultNow(),
      /**
       * `last_message_at` truncated to the minute (generated): what the thread list's indexes hold instead of
       * `last_message_at` itself, so an append's thread-row update changes no indexed value while the minute is the
       * same (a conversation turn's messages, typically) and is a HOT update: no new entry in the thread's four
       * indexes. Ordering by (this, `last_message_at`, `id`) is the same order as by (`last_message_at`, `id`): the
       * minute is a non-decreasing function of the time.
       */
      lastActivityMinute: timestamp('last_activity_minute', { withTimezone: true })
        .notNull()
        .generatedAlwaysAs(sql`date_bin('1 minute'::interval, last_message_at, '2000-01-01 00:00:00+00'::timestamptz)`),
      /** The thread this one was forked from (no foreign key: a fork outlives its parent). */
      parentThreadId: uuid('parent_thread_id'),
      forkedAtSequence: bigint('forked_at_sequence', { mode: 'number' }),
      /**
       * The first thread of this one's fork family (the thread every fork chain leading here started from), null
       * for a thread that is not a fork. Set at fork time, so it holds when the threads in between are deleted.
       */
      rootThreadId: uuid('root_thread_id'),
      ...timestamps,
      deletedAt: timestamp('deleted_at', { withTimezone: true }),
    },
    (t) => [
      primaryKey({ name: 'agent_thread_pk', columns: [t.tenantId, t.id] }),
      // On the minute, not `last_message_at`: see lastActivityMinute. `listThreads` sorts within a minute.
      index('agent_thread_user_recent_idx')
        .on(t.tenantId, t.userId, t.lastActivityMinute.desc())
        .where(sql`${t.deletedAt} is null`),
      index('agent_thread_recent_idx')
        .on(t.tenantId, t.lastActivityMinute.desc())
        .where(sql`${t.deletedAt} is null`),
      index('agent_thread_root_idx')
        .on(t.tenantId, t.rootThreadId)
        .where(sql`${t.rootThreadId} is not null`),
      check('agent_thread_next_sequence_nonnegative', sql`${t.nextSequence} >= 0`),
      check('agent_thread_metadata_is_object', sql`jsonb_typeof(${t.metadata}) = 'object'`),
      // The target of the children's (tenant_id, thread_id, user_id) foreign keys.
      unique('agent_thread_user_unique').on(t.tenantId, t.id, t.userId),
      tenantIsolationPolicy('agent_thread_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentRun = table(
    'agent_run',
    {
      tenantId: uuid('tenant_id').notNull(),
      id: uuid('id').notNull().defaultRandom(),
      threadId: uuid('thread_id').notNull(),
      /** The thread's user, copied when the row is written (the user scope's policy reads it here, not by a join). */
      userId: text('user_id'),
      status: runStatus('status').notNull().default('running'),
      provider: text('provider'),
      model: text('model'),
      inputTokens: integer('input_tokens'),
      outputTokens: integer('output_tokens'),
      reasoningTokens: integer('reasoning_tokens'),
      cachedInputTokens: integer('cached_input_tokens'),
      error: jsonb('error').$type<StoredMetadata>(),
      /** Why the model's last step ended (`stop`, `length`, `tool-calls`, …), as the AI SDK reports it. */
      finishReason: text('finish_reason'),
      metadata: jsonb('metadata')
        .$type<StoredMetadata>()
        .notNull()
        .default(sql`'{}'::jsonb`),
      startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
      finishedAt: timestamp('finished_at', { withTimezone: true }),
      ...timestamps,
    },
    (t) => [
      primaryKey({ name: 'agent_run_pk', columns: [t.tenantId, t.id] }),
      unique('agent_run_thread_id_unique').on(t.tenantId, t.threadId, t.id),
      index('agent_run_thread_created_idx').on(t.tenantId, t.threadId, t.createdAt),
      foreignKey({
        name: 'agent_run_thread_fk',
        columns: [t.tenantId, t.threadId],
        foreignColumns: [agentThread.tenantId, agentThread.id],
      }).onDelete('cascade'),
      check('agent_run_finished_after_started', sql`${t.finishedAt} is null or ${t.finishedAt} >= ${t.startedAt}`),
      // With the thread's user, or none (MATCH SIMPLE): a row can never claim a user its thread does not have.
      foreignKey({
        name: 'agent_run_thread_user_fk',
        columns: [t.tenantId, t.threadId, t.userId],
        foreignColumns: [agentThread.tenantId, agentThread.id, agentThread.userId],
      }).onDelete('cascade'),
      tenantIsolationPolicy('agent_run_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentMessage = table(
    'agent_message',
    {
      tenantId: uuid('tenant_id').notNull(),
      id: uuid('id').notNull().defaultRandom(),
      threadId: uuid('thread_id').notNull(),
      /** The thread's user, copied when the row is written (the user scope's policy reads it here, not by a join). */
      userId: text('user_id'),
      runId: uuid('run_id'),
      /** Per-thread, gapless, starting at 1; allocated from `agent_thread.next_sequence`. */
      sequence: bigint('sequence', { mode: 'number' }).notNull(),
      /** The client's `UIMessage.id`, unique per thread. */
      messageId: text('message_id').notNull(),
      clientRequestId: text('client_request_id'),
      /**
       * For a fork's copy: the id of the original row it was copied from (through any chain of forks), so that a
       * redaction reaches every copy whatever was deleted since. Null for an original (the append path does not
       * set it): a message's lineage is `coalesce(source_message_id, id)`.
       */
      sourceMessageId: uuid('source_message_id'),
      role: messageRole('role').notNull(),
      status: messageStatus('status').notNull().default('completed'),
      /**
       * The parts as JSON text, exactly as written (key order included): `json`, not `jsonb`, so that a read prints
       * them at the cost of copying text, where jsonb would rebuild the text from its binary form (most of a page's
       * server time). A change of parts is a change of this text (`content_version`); search reads them as jsonb.
       */
      parts: json('parts')
        .$type<StoredMessagePart[]>()
        .notNull()
        .default(sql`'[]'::json`),
      metadata: jsonb('metadata')
        .$type<StoredMetadata>()
        .notNull()
        .default(sql`'{}'::jsonb`),
      contextState: contextState('context_state').notNull().default('eligible'),
      exclusionReason: text('exclusion_reason'),
      /** Always included in the model's context, whatever the budget trims. */
      pinned: boolean('pinned').notNull().default(false),
      /**
       * The message-shape version the row was written with: the default is the current one
       * (`CURRENT_MESSAGE_SCHEMA_VERSION` in src/model, kept equal by a test), so the append functions, whose
       * signatures stay fixed, need not pass it. 1 = AI SDK v4 shapes may occur, 2 = v7 parts.
       */
      schemaVersion: integer('schema_version').notNull().default(2),
      contentVersion: integer('content_version').notNull().default(1),
      byteSize: integer('byte_size').notNull().default(0),
      /** Raw token count of the parts, without per-model factors or overheads. */
      tokenCount: integer('token_count'),
      tokenCounterId: text('token_counter_id'),
      /**
       * The raw count of each part of the model messages the parts convert to (`countStoredPartTokens`), summing to
       * `token_count`, written in the same statement; null where they could not be computed (while streaming, a
       * fractional counter). The context engine subtracts them when it prunes.
       */
      partTokenCounts: integer('part_token_counts').array(),
      /** A streaming message whose lease has expired belongs to a dead writer and is recovered as failed. */
      leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
      /**
       * The search vector of the text parts (`searchVectorOf` in `tsvector.ts`), set by the `agent_message_search_vector`
       * trigger when a row is inserted or its parts change; null while a store with `search: 'deferred'` (or
       * `false`) has not indexed it yet: `searchMessages` then computes it on the fly, so results are the same.
       */
      searchVector: tsvector('search_vector'),
      /**
       * The version of the text extraction that made `search_vector` (`agent_history_search_version()` when the
       * trigger computed it), null while the vector is. Set only by the trigger; `rebuildDerivedData` recomputes
       * every vector of another version, so a change of extraction or dictionary can be rolled out.
       */
      searchVersion: smallint('search_version'),
      ...timestamps,
      completedAt: timestamp('completed_at', { withTimezone: true }),
      redactedAt: timestamp('redacted_at', { withTimezone: true }),
      deletedAt: timestamp('deleted_at', { withTimezone: true }),
    },
    (t) => [
      primaryKey({ name: 'agent_message_pk', columns: [t.tenantId, t.id] }),
      uniqueIndex('agent_message_thread_sequence_uidx').on(t.tenantId, t.threadId, t.sequence),
      uniqueIndex('agent_message_thread_message_id_uidx').on(t.tenantId, t.threadId, t.messageId),
      uniqueIndex('agent_message_client_request_uidx')
        .on(t.tenantId, t.threadId, t.clientRequestId)
        .where(sql`${t.clientRequestId} is not null`),
      index('agent_message_pinned_idx')
        .on(t.tenantId, t.threadId, t.sequence)
        .where(sql`${t.pinned}`),
      index('agent_message_source_idx')
        .on(t.tenantId, t.sourceMessageId)
        .where(sql`${t.sourceMessageId} is not null`),
      index('agent_message_run_idx')
        .on(t.tenantId, t.threadId, t.runId)
        .where(sql`${t.runId} is not null`),
      index('agent_message_streaming_lease_idx')
        .on(t.tenantId, t.leaseExpiresAt)
        .where(sql`${t.status} in ('pending', 'streaming')`),
      // Partial: a row without a vector yet (`search: 'deferred'`) adds no GIN entry; `@@` is strict, so a search
      // still uses this index.
      index('agent_message_search_idx')
        .using('gin', t.searchVector)
        .where(sql`${t.searchVector} is not null`),
      // The rows a deferred store has not indexed yet (empty when every store indexes inline).
      index('agent_message_search_pending_idx')
        .on(t.tenantId, t.threadId)
        .where(sql`${t.searchVector} is null`),
      foreignKey({
        name: 'agent_message_thread_fk',
        columns: [t.tenantId, t.threadId],
        foreignColumns: [agentThread.tenantId, agentThread.id],
      }).onDelete('cascade'),
      // NO ACTION, not SET NULL: a composite SET NULL would null tenant_id. NO ACTION is RESTRICT checked at the
      // end of the statement, so deleting a run that still has messages fails, while deleting the thread
      // (which cascades to both) succeeds.
      foreignKey({
        name: 'agent_message_run_fk',
        columns: [t.tenantId, t.threadId, t.runId],
        foreignColumns: [agentRun.tenantId, agentRun.threadId, agentRun.id],
      }).onDelete('no action'),
      check('agent_message_sequence_positive', sql`${t.sequence} > 0`),
      check('agent_message_parts_is_array', sql`json_typeof(${t.parts}) = 'array'`),
      check('agent_message_metadata_is_object', sql`jsonb_typeof(${t.metadata}) = 'object'`),
      check('agent_message_content_version_positive', sql`${t.contentVersion} > 0`),
      check('agent_message_message_id_length', sql`char_length(${t.messageId}) between 1 and 200`),
      check('agent_message_client_request_id_length', sql`char_length(${t.clientRequestId}) between 1 and 200`),
      // With the thread's user, or none (MATCH SIMPLE): a row can never claim a user its thread does not have.
      foreignKey({
        name: 'agent_message_thread_user_fk',
        columns: [t.tenantId, t.threadId, t.userId],
        foreignColumns: [agentThread.tenantId, agentThread.id, agentThread.userId],
      }).onDelete('cascade'),
      tenantIsolationPolicy('agent_message_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentSummary = table(
    'agent_summary',
    {
      tenantId: uuid('tenant_id').notNull(),
      id: uuid('id').notNull().defaultRandom(),
      threadId: uuid('thread_id').notNull(),
      /** The thread's user, copied when the row is written (the user scope's policy reads it here, not by a join). */
      userId: text('user_id'),
      /** The inclusive sequence range this summary stands for. */
      fromSequence: bigint('from_sequence', { mode: 'number' }).notNull(),
      throughSequence: bigint('through_sequence', { mode: 'number' }).notNull(),
      content: text('content').notNull(),
      tokenCount: integer('token_count').notNull(),
      tokenCounterId: text('token_counter_id'),
      summarizerModel: text('summarizer_model'),
      policyVersion: text('policy_version').notNull(),
      previousSummaryId: uuid('previous_summary_id'),
      /** Set when a covered message is redacted: a stale summary is never used again. */
      stale: boolean('stale').notNull().default(false),
      ...timestamps,
    },
    (t) => [
      primaryKey({ name: 'agent_summary_pk', columns: [t.tenantId, t.id] }),
      index('agent_summary_thread_through_idx').on(t.tenantId, t.threadId, t.throughSequence),
      foreignKey({
        name: 'agent_summary_thread_fk',
        columns: [t.tenantId, t.threadId],
        foreignColumns: [agentThread.tenantId, agentThread.id],
      }).onDelete('cascade'),
      check('agent_summary_range', sql`${t.fromSequence} >= 1 and ${t.throughSequence} >= ${t.fromSequence}`),
      // With the thread's user, or none (MATCH SIMPLE): a row can never claim a user its thread does not have.
      foreignKey({
        name: 'agent_summary_thread_user_fk',
        columns: [t.tenantId, t.threadId, t.userId],
        foreignColumns: [agentThread.tenantId, agentThread.id, agentThread.userId],
      }).onDelete('cascade'),
      tenantIsolationPolicy('agent_summary_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentContextSnapshot = table(
    'agent_context_snapshot',
    {
      tenantId: uuid('tenant_id').notNull(),
      id: uuid('id').notNull().defaultRandom(),
      threadId: uuid('thread_id').notNull(),
      /** The thread's user, copied when the row is written (the user scope's policy reads it here, not by a join). */
      userId: text('user_id'),
      /** Per-thread version, 1, 2, 3…; written with an expected version, never overwritten. */
      version: integer('version').notNull(),
      /** Inclusive: the snapshot represents the log through this sequence; the tail starts after it. */
      throughSequence: bigint('through_sequence', { mode: 'number' }).notNull(),
      summaryId: uuid('summary_id'),
      includedSequences: jsonb('included_sequences').$type<number[]>().notNull(),
      pruned: jsonb('pruned')
        .$type<unknown>()
        .notNull()
        .default(sql`'[]'::jsonb`),
      budget: jsonb('budget')
        .$type<unknown>()
        .notNull()
        .default(sql`'{}'::jsonb`),
      policyVersion: text('policy_version').notNull(),
      /** A hash of the final model messages, so a rebuild can be checked against what the model saw. */
      messagesHash: text('messages_hash').notNull(),
      /** The step of the model call the snapshot was written for (0 = the first), or null when not known. */
      stepNumber: integer('step_number'),
      stale: boolean('stale').notNull().default(false),
      createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    },
    (t) => [
      primaryKey({ name: 'agent_context_snapshot_pk', columns: [t.tenantId, t.id] }),
      uniqueIndex('agent_context_snapshot_thread_version_uidx').on(t.tenantId, t.threadId, t.version),
      foreignKey({
        name: 'agent_context_snapshot_thread_fk',
        columns: [t.tenantId, t.threadId],
        foreignColumns: [agentThread.tenantId, agentThread.id],
      }).onDelete('cascade'),
      check('agent_context_snapshot_version_positive', sql`${t.version} > 0`),
      check('agent_context_snapshot_through_nonnegative', sql`${t.throughSequence} >= 0`),
      // With the thread's user, or none (MATCH SIMPLE): a row can never claim a user its thread does not have.
      foreignKey({
        name: 'agent_context_snapshot_thread_user_fk',
        columns: [t.tenantId, t.threadId, t.userId],
        foreignColumns: [agentThread.tenantId, agentThread.id, agentThread.userId],
      }).onDelete('cascade'),
      tenantIsolationPolicy('agent_context_snapshot_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentAuditEvent = table(
    'agent_audit_event',
    {
      tenantId: uuid('tenant_id').notNull(),
      id: uuid('id').notNull().defaultRandom(),
      /** No foreign key: the record of a deletion must outlive what it deleted. */
      threadId: uuid('thread_id'),
      messageId: uuid('message_id'),
      /** The user of the thread it concerns, or the scoped user who acted, or null (a tenant-wide change). */
      userId: text('user_id'),
      /** What happened, noun first: 'message-redacted', 'message-excluded', 'thread-deleted', … */
      action: text('action').notNull(),
      actor: text('actor').notNull(),
      reason: text('reason'),
      /** Never holds redacted content. */
      details: jsonb('details')
        .$type<StoredMetadata>()
        .notNull()
        .default(sql`'{}'::jsonb`),
      createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    },
    (t) => [
      primaryKey({ name: 'agent_audit_event_pk', columns: [t.tenantId, t.id] }),
      index('agent_audit_event_thread_idx').on(t.tenantId, t.threadId, t.createdAt),
      tenantIsolationPolicy('agent_audit_event_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentStreamChunk = table(
    'agent_stream_chunk',
    {
      tenantId: uuid('tenant_id').notNull(),
      threadId: uuid('thread_id').notNull(),
      /** The row id of the assistant message being streamed (`agent_message.id`). */
      messageId: uuid('message_id').notNull(),
      /** The thread's user, copied from the message (the user scope's policy reads it). */
      userId: text('user_id'),
      /** The batch's place in the answer's stream: 0, 1, 2… without gaps. */
      batch: integer('batch').notNull(),
      /** The batch's UI message chunks: a JSON array, as text (exactly what was sent, NUL-safe, no jsonb parsing). */
      chunks: text('chunks').notNull(),
      /** The stream's last batch: a reader that reaches it has seen the whole answer. */
      final: boolean('final').notNull().default(false),
      createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    },
    (t) => [
      primaryKey({ name: 'agent_stream_chunk_pk', columns: [t.tenantId, t.messageId, t.batch] }),
      index('agent_stream_chunk_thread_idx').on(t.tenantId, t.threadId),
      foreignKey({
        name: 'agent_stream_chunk_message_fk',
        columns: [t.tenantId, t.messageId],
        foreignColumns: [agentMessage.tenantId, agentMessage.id],
      }).onDelete('cascade'),
      foreignKey({
        name: 'agent_stream_chunk_thread_user_fk',
        columns: [t.tenantId, t.threadId, t.userId],
        foreignColumns: [agentThread.tenantId, agentThread.id, agentThread.userId],
      }).onDelete('cascade'),
      check('agent_stream_chunk_batch_nonnegative', sql`${t.batch} >= 0`),
      tenantIsolationPolicy('agent_stream_chunk_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentToolPayload = table(
    'agent_tool_payload',
    {
      tenantId: uuid('tenant_id').notNull(),
      threadId: uuid('thread_id').notNull(),
      /** The row id of the assistant message whose tool part the payload belongs to (`agent_message.id`). */
      messageId: uuid('message_id').notNull(),
      /** The thread's user, copied from the message (the user scope's policy reads it). */
      userId: text('user_id'),
      /** The tool part's index in the message's parts. */
      part: integer('part').notNull(),
      /** The tool part's `toolCallId`, as the part has it. */
      toolCallId: text('tool_call_id').notNull(),
      /** Which field of the tool part: `input`, `output` or `rawInput`. */
      field: text('field').notNull(),
      /** The chunk's place in the payload: 0, 1, 2… without gaps, up to `chunk_count - 1`. */
      chunk: integer('chunk').notNull(),
      /** How many chunks the whole payload has (the same on every chunk). */
      chunkCount: integer('chunk_count').notNull(),
      /** The whole payload's size as JSON, in UTF-8 bytes (the same on every chunk). */
      byteSize: bigint('byte_size', { mode: 'number' }).notNull(),
      /** The SHA-256 of the whole payload's JSON, hex (the same on every chunk): a reader checks it has one payload. */
      digest: text('digest').notNull(),
      /** The chunk's piece of the payload's JSON text. */
      content: text('content').notNull(),
      createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    },
    (t) => [
      primaryKey({
        name: 'agent_tool_payload_pk',
        columns: [t.tenantId, t.messageId, t.part, t.field, t.chunk],
      }),
      index('agent_tool_payload_thread_idx').on(t.tenantId, t.threadId),
      foreignKey({
        name: 'agent_tool_payload_message_fk',
        columns: [t.tenantId, t.messageId],
        foreignColumns: [agentMessage.tenantId, agentMessage.id],
      }).onDelete('cascade'),
      foreignKey({
        name: 'agent_tool_payload_thread_user_fk',
        columns: [t.tenantId, t.threadId, t.userId],
        foreignColumns: [agentThread.tenantId, agentThread.id, agentThread.userId],
      }).onDelete('cascade'),
      check('agent_tool_payload_field', sql`${t.field} in ('input', 'output', 'rawInput')`),
      check('agent_tool_payload_chunk_range', sql`${t.chunk} >= 0 and ${t.chunk} < ${t.chunkCount}`),
      check('agent_tool_payload_part_nonnegative', sql`${t.part} >= 0`),
      tenantIsolationPolicy('agent_tool_payload_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  const agentMemory = table(
    'agent_memory',
    {
      tenantId: uuid('tenant_id').notNull(),
      id: uuid('id').notNull().defaultRandom(),
      /** The user the item belongs to: required for the `user` scope; for a thread's items, the thread's user. */
      userId: text('user_id'),
      /** `user`: shared by the user's threads; `thread`: one thread's (see `threadId`). */
      scope: text('scope').$type<(typeof MEMORY_SCOPES)[number]>().notNull(),
      /** `working`: a working-memory document; `fact`: a remembered fact; `recall`: one message's recall entry. */
      kind: text('kind').$type<(typeof MEMORY_KINDS)[number]>().notNull(),
      /** The thread of a thread-scoped item (a recall entry's: its message's thread); null for a user's item. */
      threadId: uuid('thread_id'),
      /** The text: the document, the fact, or the message text a recall entry's embedding was made from. */
      content: text('content').notNull(),
      /** The thread the item was derived from, or null. */
      sourceThreadId: uuid('source_thread_id'),
      /** The message row (`agent_message.id`) the item was derived from, or null; the item goes with the message. */
      sourceMessageId: uuid('source_message_id'),
      /** The source message's `content_version` when the item was derived from it. */
      sourceContentVersion: integer('source_content_version'),
      /** Raised by one on every update: writers pass the version they read (optimistic concurrency). */
      version: integer('version').notNull().default(1),
      /** The embedding of `content`, or null; ranked by exact cosine similarity. */
      embedding: real('embedding').array(),
      /** The id of the model that made `embedding`: only embeddings of the query's model are compared. */
      embeddingModel: text('embedding_model'),
      ...timestamps,
    },
    (t) => [
      primaryKey({ name: 'agent_memory_pk', columns: [t.tenantId, t.id] }),
      // One working-memory document per user and per thread.
      uniqueIndex('agent_memory_user_working_uidx')
        .on(t.tenantId, t.userId)
        .where(sql`${t.kind} = 'working' and ${t.scope} = 'user'`),
      uniqueIndex('agent_memory_thread_working_uidx')
        .on(t.tenantId, t.threadId)
        .where(sql`${t.kind} = 'working' and ${t.scope} = 'thread'`),
      // One recall entry per message row.
      uniqueIndex('agent_memory_recall_message_uidx')
        .on(t.tenantId, t.sourceMessageId)
        .where(sql`${t.kind} = 'recall'`),
      index('agent_memory_user_kind_idx').on(t.tenantId, t.userId, t.kind),
      index('agent_memory_thread_idx')
        .on(t.tenantId, t.threadId)
        .where(sql`${t.threadId} is not null`),
      index('agent_memory_source_message_idx')
        .on(t.tenantId, t.sourceMessageId)
        .where(sql`${t.sourceMessageId} is not null`),
      foreignKey({
        name: 'agent_memory_thread_fk',
        columns: [t.tenantId, t.threadId],
        foreignColumns: [agentThread.tenantId, agentThread.id],
      }).onDelete('cascade'),
      // With the thread's user, or none (MATCH SIMPLE): a row can never claim a user its thread does not have.
      foreignKey({
        name: 'agent_memory_thread_user_fk',
        columns: [t.tenantId, t.threadId, t.userId],
        foreignColumns: [agentThread.tenantId, agentThread.id, agentThread.userId],
      }).onDelete('cascade'),
      // What was derived from a message goes when the message (or its thread) is deleted.
      foreignKey({
        name: 'agent_memory_source_message_fk',
        columns: [t.tenantId, t.sourceMessageId],
        foreignColumns: [agentMessage.tenantId, agentMessage.id],
      }).onDelete('cascade'),
      check('agent_memory_scope', sql`${t.scope} in ('user', 'thread')`),
      check('agent_memory_kind', sql`${t.kind} in ('working', 'fact', 'recall')`),
      check(
        'agent_memory_scope_owner',
        sql`(${t.scope} = 'user' and ${t.userId} is not null and ${t.threadId} is null) or (${t.scope} = 'thread' and ${t.threadId} is not null)`,
      ),
      check(
        'agent_memory_recall_source',
        sql`${t.kind} <> 'recall' or (${t.scope} = 'thread' and ${t.sourceMessageId} is not null and ${t.sourceContentVersion} is not null)`,
      ),
      check('agent_memory_embedding_model', sql`(${t.embedding} is null) = (${t.embeddingModel} is null)`),
      check('agent_memory_version_positive', sql`${t.version} > 0`),
      tenantIsolationPolicy('agent_memory_tenant_isolation', t.tenantId, role, t.userId),
    ],
  ).enableRLS();

  return {
    agentHistoryAppRole: role,
    agentMessageRole: messageRole,
    agentMessageStatus: messageStatus,
    agentMessageContextState: contextState,
    agentRunStatus: runStatus,
    agentThread,
    agentRun,
    agentMessage,
    agentSummary,
    agentContextSnapshot,
    agentAuditEvent,
    agentStreamChunk,
    agentToolPayload,
    agentMemory,
  };
}

/** The tables, enums and role of one agent-history installation. */
export type AgentTables = ReturnType<typeof defineAgentTables>;
