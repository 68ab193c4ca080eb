/** `agent-history`: the conversation store. */
export { createAgentHistory } from './store/create-agent-history.js';
export type { CreateAgentHistoryOptions } from './store/create-agent-history.js';
export type { RowLevelSecurityCheck, SetupProblem, SetupReport, CheckSetupOptions } from './store/check-setup.js';
export { checkSetup } from './store/check-setup.js';
export type { AgentHistory, ForTenantOptions } from './store/agent-history.js';
export type { TenantHistory } from './store/tenant-history.js';
export type { ThreadOperations } from './store/thread-operations.js';
export type { MessageOperations } from './store/message-operations.js';
export type { StreamChunkOperations } from './store/stream-chunk-operations.js';
export type {
  AppendStreamChunksOptions,
  DeleteStreamChunksOptions,
  ReadStreamChunksOptions,
  StreamChunkBatch,
  StreamChunkPage,
} from './store/stream-chunks.js';
export { STREAM_CHUNK_CHANNEL } from './store/stream-notifications.js';
export type {
  ContextArtifactOperations,
  ContextStoreOptions,
  ThreadContextStore,
  LoadContextOptions,
} from './store/context-artifact-operations.js';
export type { AuditOptions } from './store/audit.js';
export { migrate, MIGRATIONS_FOLDER, type MigrateOptions } from './store/migrate.js';
export {
  customMigrationSql,
  customMigrationFiles,
  type CustomMigrationFile,
  type CustomMigrationSql,
  type CustomMigrationSqlOptions,
} from './store/custom-migration-sql.js';
export {
  createCachedTokenCounter,
  loadO200kTokenCounter,
  scopeTokenCounter,
  type TokenCounter,
} from './tokens/token-counter.js';
export {
  createContextMessageCache,
  type ContextMessageCacheOptions,
  type SharedContextMessageCache,
} from './tokens/context-message-cache.js';
export { withTenant, type TenantTransaction } from './tenant/with-tenant.js';
export type { AgentHistoryDatabase } from './tenant/database.js';
export type { AppendMessageOptions, AppendResult } from './store/append-message.js';
export type { DerivedDataOperations } from './store/derived-data-operations.js';
export type { RebuildDerivedDataOptions, RebuildProgress, RebuildResult } from './store/rebuild-derived-data.js';
export { rebuildAllTenants } from './store/rebuild-all-tenants.js';
export type { CheckedMessage, MessageCheck, MessageWrite } from './store/message-check.js';
export type { AppendBatchingOptions } from './store/append-batcher.js';
export {
  storedPreviewMarker,
  TOOL_PAYLOAD_REFERENCE,
  type OversizedToolPayload,
  type OversizedToolPayloadOptions,
  type ToolPayloadField,
} from './store/fit-assistant-parts.js';
export type {
  BeginAssistantMessageOptions,
  CheckpointMessageOptions,
  FinalizeMessageOptions,
  FinalStatus,
} from './store/assistant-lifecycle.js';
export type { ReopenAssistantMessageOptions, ReopenResult } from './store/reopen-assistant-message.js';
export type { GetMessageOptions, ListMessagesOptions, MessagePage } from './store/list-messages.js';
export type { ChatWindowMessage, ChatWindowPage, ListChatMessagesOptions } from './store/list-chat-messages.js';
export type { MessageInclude } from './store/read-tool-payloads.js';
export type { StreamToolPayloadOptions, ToolPayloadStream } from './store/stream-tool-payload.js';
export type { ExcludeMessagesOptions } from './store/message-state.js';
export type { RedactMessageOptions } from './store/redact-message.js';
export type { RetentionOptions } from './store/retention.js';
export type { FailRunOptions, FinishRunOptions, StartRunOptions } from './store/runs.js';
export type { SearchHit, SearchMessagesOptions } from './store/search-messages.js';
export type { IndexPendingMessagesOptions, IndexPendingResult } from './store/search-indexing.js';
export type { SearchIndexing } from './store/store-context-parts.js';
export type { ForkThreadOptions } from './store/fork-thread.js';
export type {
  CreateThreadOptions,
  ListThreadsOptions,
  RenameThreadOptions,
  ThreadPage,
  UpdateThreadMetadataOptions,
} from './store/threads.js';
export type {
  ContextState,
  MessageRole,
  MessageStatus,
  RunStatus,
  RunUsage,
  StorableMessage,
  AppendableMessage,
  StoredMessage,
  StoredRun,
  StoredSnapshot,
  StoredSummary,
  StoredThread,
} from './model/stored-rows.js';
export type {
  ContextMemory,
  ContextMessage,
  ContextMessageCache,
  ContextRecalledItem,
  ContextSnapshot,
  ContextStore,
  ContextSummary,
  LoadedContext,
  LoadedThreadContext,
  NewSnapshot,
  NewSummary,
  SummarySourceVersion,
  ContextWorkingMemory,
  WorkingMemoryStore,
} from './model/context-store.js';
export type { MemoryEmbedder } from './model/memory-embedder.js';
export type { MemoryOperations } from './store/memory-operations.js';
export type { WorkingMemory, WorkingMemoryOptions, UpdateWorkingMemoryOptions } from './store/working-memory.js';
export type { RecallMessagesOptions } from './store/recall-messages.js';
export type { EmbedPendingMemoryOptions, EmbedPendingMemoryResult } from './store/embed-pending-memory.js';
export type { ContextUIMessage, ContextUIPart } from './model/context-ui-message.js';
export {
  CURRENT_MESSAGE_SCHEMA_VERSION,
  MESSAGE_SHAPE_MIGRATIONS,
  migrateMessageParts,
  type MessageShapeMigration,
} from './model/message-shape-migrations.js';
export * from './errors/index.js';
