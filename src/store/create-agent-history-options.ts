import type { AgentTables } from '../schema/define-agent-tables.js';
import type { AgentHistoryDatabase } from '../tenant/database.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { AppendBatchingOptions } from './append-batcher.js';
import type { RowLevelSecurityCheck } from './check-setup.js';
import type { OversizedToolPayloadOptions } from './fit-assistant-parts.js';
import type { MessageCheck } from './message-check.js';
import type { SearchIndexing } from './store-context-parts.js';
import type { SearchDrainOptions } from './search-drain.js';
import type { ContextMessageCacheOptions, SharedContextMessageCache } from '../tokens/context-message-cache.js';

/** The options of `createAgentHistory`. */
export interface CreateAgentHistoryOptions {
  /** A Drizzle Postgres database (postgres-js, node-postgres, PGlite, …). */
  db: AgentHistoryDatabase;
  /** The tables, when they come from `defineAgentTables({ schema })`. @default the default instance */
  tables?: AgentTables;
  /**
   * The role every store transaction switches to (`set_config('role', …, true)`); the pool's login role must be
   * a member of it. `null` keeps the login role, which then must be subject to the policies itself.
   * @default 'agent_history_app'
   */
  appRole?: string | null;
  /** Counts tokens at write time. @default exact o200k (gpt-tokenizer) */
  tokenCounter?: TokenCounter | Promise<TokenCounter>;
  /**
   * The largest message accepted from a client (`appendMessage`), parts and metadata serialized. An assistant
   * message (checkpoint, finalize) is never refused for its size: its largest tool inputs and outputs are stored
   * as previews until it fits, and kept whole in `agent_tool_payload` (see `oversizedToolPayloads`).
   * @default 1_048_576 (1 MiB)
   */
  maxMessageBytes?: number;
  /**
   * The application's own check of every message the store writes (append, checkpoint, finalize, reopen), after
   * the built-in AI SDK part rule: give `chatMessageCheck(schemas)` to apply the chat route's schemas. @default none
   */
  checkMessage?: MessageCheck;
  /** How tool payloads that do not fit are shortened, and where they are kept whole. @default {} (in the store) */
  oversizedToolPayloads?: OversizedToolPayloadOptions;
  /** How long a pending or streaming message belongs to its writer without a checkpoint. @default 60_000 ms */
  leaseMs?: number;
  /**
   * Write combining: the appends made in one turn of the event loop, and those that arrive while `maxInFlight`
   * append statements are already running or while their thread has one in flight, are sent together, one
   * statement and one commit for many messages (same guarantees as one by one: gapless sequences, idempotency,
   * commit order). A lone append waits only for the end of its turn. `false` sends every append alone; so does a
   * `db` that is a transaction.
   * @default { maxInFlight: 2, maxBatchSize: 64, maxBatchBytes: 4_194_304 }
   */
  appendBatching?: AppendBatchingOptions | false;
  /**
   * Before its first statement the store checks, once, that row-level security holds for the role it runs as
   * (`appRole`, or the login when null): not a superuser, not `BYPASSRLS`, every table with row-level security on,
   * and forced where the role owns the table. `'refuse'` fails every call with `RowLevelSecurityBypassError`;
   * `'warn'` logs it once and goes on (for a trusted single-tenant set-up). @default 'refuse'
   */
  rowLevelSecurityCheck?: RowLevelSecurityCheck;
  /**
   * When a message's search vector is computed: `'inline'` in the append, `'background'` by the store once it is
   * idle, `'deferred'` by `indexPendingMessages` in batches, `false` never. `searchMessages` returns the same hits in
   * every mode. A store over a transaction (`db: tx`, `withTransaction(tx)`) indexes `'background'` inline. See {@link SearchIndexing}.
   * @default 'inline'
   */
  search?: SearchIndexing;
  /**
   * Keeps each stored message's model messages between requests for the context engine, in this process, per
   * tenant and thread, so a long thread is not converted again on every request; `false` turns it off. An entry
   * is used only for the row's current `contentVersion`, which the database raises on every change of the
   * parts (the database's content version), with the same status: an edited, redacted or finalized message is converted again,
   * and its old entry is dropped when the new one is stored. A redaction drops the message's entry in this process
   * at once (another process drops its own at its next load of the thread). Pass a cache
   * (`createContextMessageCache`) to share one between stores of the same database or to read its size. A store
   * over a transaction (`db: tx`, `withTransaction(tx)`) keeps nothing in it: the transaction may roll back.
   * @default { maxBytes: 33_554_432 } (32 MiB of stored messages, about twice that in heap; least recently used out first)
   */
  contextCache?: ContextMessageCacheOptions | SharedContextMessageCache | false;
  /** @internal Test hooks: a clock and an id generator. */
  _internal?: {
    /** The clock (leases, retention cut-offs). @default () => new Date() */
    now?: () => Date;
    /** Thread ids. @default crypto.randomUUID */
    generateId?: () => string;
    /** Called when a combined append statement fails, before its items are resent one by one. */
    onAppendBatchError?: (error: unknown, size: number) => void;
    /** `search: 'background'`'s timing and batch size, and where a failed batch of its timer goes. */
    searchDrain?: Pick<SearchDrainOptions, 'idleMs' | 'maxDelayMs' | 'batchSize'>;
    onSearchDrainError?: (error: unknown, tenantId: string) => void;
  };
}
