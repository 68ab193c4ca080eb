/**
 * `agent-history/schema`: the Drizzle tables. This entry imports nothing but drizzle-orm, so drizzle-kit can
 * load it: `export * from 'agent-history/schema'` in a schema file is enough.
 */
import { defineAgentTables } from './define-agent-tables.js';

export {
  defineAgentTables,
  DEFAULT_APP_ROLE,
  MESSAGE_ROLES,
  MESSAGE_STATUSES,
  CONTEXT_STATES,
  RUN_STATUSES,
  MEMORY_SCOPES,
  MEMORY_KINDS,
} from './define-agent-tables.js';
export type {
  AgentTables,
  DefineAgentTablesOptions,
  StoredMessagePart,
  StoredMetadata,
} from './define-agent-tables.js';
export {
  TENANT_SETTING,
  USER_SETTING,
  currentTenantId,
  currentUserId,
  tenantPredicate,
  userScopePredicate,
  tenantIsolationPolicy,
} from './tenant-policy.js';
export { tsvector } from './tsvector.js';

/** The default installation (schema `public`, role `agent_history_app`): the form drizzle-kit sees. */
export const {
  agentHistoryAppRole,
  agentMessageRole,
  agentMessageStatus,
  agentMessageContextState,
  agentRunStatus,
  agentThread,
  agentRun,
  agentMessage,
  agentSummary,
  agentContextSnapshot,
  agentAuditEvent,
  agentStreamChunk,
  agentToolPayload,
  agentMemory,
} = defineAgentTables();
