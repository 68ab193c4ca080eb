import { sql } from 'drizzle-orm';
import type { SharedContextMessageCache } from '../tokens/context-message-cache.js';
import type { AgentTables } from '../schema/define-agent-tables.js';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import { keepCallerSettings } from '../tenant/keep-caller-settings.js';
import { withTenant, type TenantTransaction } from '../tenant/with-tenant.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { AppendLanes } from './append-lanes.js';
import type { AppendStatements } from './append-statements.js';
import type { OversizedToolPayloadOptions } from './fit-assistant-parts.js';
import type { MessageCheck } from './message-check.js';
import type { AppendBatcher, OneStatementReads, SearchIndexing } from './store-context-parts.js';
import type { SearchDrain } from './search-drain.js';

/** What every store operation of one tenant shares. Internal. */
export interface StoreContext {
  /** The database (or transaction) every statement runs on. */
  db: AgentHistoryDatabase;
  /** The tables, in their schema. */
  tables: AgentTables;
  /** The tenant, validated and lower-cased. */
  tenantId: string;
  /** The user every transaction is scoped to (row-level security), or null for the whole tenant. */
  userId: string | null;
  /** The tables' schema: first on each transaction's search path, before `pg_temp`. */
  schema: string;
  /** The role each transaction switches to; null keeps the login role. */
  appRole: string | null;
  /** Loaded once (the tokenizer is imported lazily) and shared. */
  tokenCounter: Promise<TokenCounter>;
  /** The largest message accepted, parts and metadata serialized. */
  maxMessageBytes: number;
  /** The application's own message check (`checkMessage`), if any. */
  checkMessage?: MessageCheck;
  /** How an assistant message over `maxMessageBytes` is made to fit. */
  oversizedToolPayloads: OversizedToolPayloadOptions;
  /** How long a pending or streaming message belongs to its writer without a checkpoint. */
  leaseMs: number;
  /** The clock. */
  now: () => Date;
  /** Makes thread ids. */
  generateId: () => string;
  /** Combines concurrent appends into one statement; `null` when batching is off. Shared by every tenant. */
  appendBatcher: AppendBatcher | null;
  /** Hands appends to one thread on in the order they were called. Shared by every tenant (keyed by tenant). */
  appendLanes: AppendLanes;
  /** The append functions' statements, in the tables' schema. */
  appendStatements: AppendStatements;
  /** Whether pages are read with the one-statement read functions. Shared by every tenant. */
  oneStatementReads: OneStatementReads;
  /** Resolves once row-level security is known to hold for the store's role (checked once per store). */
  checkRowLevelSecurity: () => Promise<void>;
  /** When search vectors are computed (`createAgentHistory({ search })`). */
  search: SearchIndexing;
  /** With `search: 'background'` (outside a transaction), where writes note their tenant to be indexed; else null. */
  searchDrain: SearchDrain | null;
  /** The context engine's cache of converted messages, shared by every tenant (each gets its own part); or null. */
  contextCache: SharedContextMessageCache | null;
}

/**
 * For a read newest first to a limit in a store transaction: under row-level security the planner has no statistics
 * for a thread (the policy's user clause is not leakproof) and would rather scan and sort all of the tenant's rows
 * than walk the thread's index to the limit; the read functions set it too. `SET LOCAL`, which Citus forwards to the
 * workers; a caller's own transaction gets its value back (`keepCallerSettings`).
 */
export const sortOff = sql.raw('set local enable_sort = off');

/** Runs `work` in a transaction scoped to the context's tenant, user (if any) and role. */
export async function inTenant<RESULT>(
  context: StoreContext,
  work: (tx: TenantTransaction) => Promise<RESULT>,
  { isolationLevel }: { isolationLevel?: 'repeatable read' } = {},
): Promise<RESULT> {
  await context.checkRowLevelSecurity();
  return keepCallerSettings(context.db, () =>
    withTenant(
      context.db,
      {
        tenantId: context.tenantId,
        userId: context.userId,
        schema: context.schema,
        role: context.appRole,
        isolationLevel,
      },
      work,
    ),
  );
}

/** The Postgres error code behind a Drizzle error, looking through `cause`s. */
export function postgresErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
