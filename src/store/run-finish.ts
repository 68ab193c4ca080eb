import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import { assertOptionalText } from '../errors/assert-input.js';
import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import type { StoredMetadata } from '../schema/define-agent-tables.js';
import type { RunStatus, RunUsage, StoredRun } from '../model/stored-rows.js';
import type { TenantTransaction } from '../tenant/with-tenant.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { isUuid } from '../errors/assert-input.js';
import type { StoreContext } from './store-context.js';
import { validateMetadata } from './validate-message.js';

/** The options of `finishRun`. */
export interface FinishRunOptions {
  /** How the run ended. */
  status: Extract<RunStatus, 'completed' | 'failed' | 'cancelled'>;
  /** The token usage the provider reported (non-negative integers). @default none (the columns stay null) */
  usage?: RunUsage;
  /** For a failed run: what went wrong (message, name, …) as a JSON object. @default null */
  error?: StoredMetadata;
  /** Why the model's last step ended (the AI SDK's `finishReason`, at most 200 characters). @default null */
  finishReason?: string;
  /** The provider, recorded only when `startRun` was given none (at most 200 characters). @default unchanged */
  provider?: string;
  /** The model id, recorded only when `startRun` was given none (at most 200 characters). @default unchanged */
  model?: string;
}

/** A run's columns as the store returns them. One object per tables (do not change it). */
export function runColumns(context: StoreContext) {
  let columns = runColumnsOf.get(context.tables);
  if (columns === undefined) {
    const {
      tenantId: _tenantId,
      createdAt: _createdAt,
      updatedAt: _updatedAt,
      ...rest
    } = getTableColumns(context.tables.agentRun);
    columns = rest;
    runColumnsOf.set(context.tables, columns);
  }
  return columns;
}
const runColumnsOf = new WeakMap<object, ReturnType<typeof getTableColumns>>();

/** A run id as the store takes it: a uuid, lower-cased; anything else is a run that does not exist. */
export function assertRunId(runId: unknown): string {
  if (!isUuid(runId)) throw new NotFoundError({ entity: 'run', id: runId });
  return runId.toLowerCase();
}

/** What finishing a run writes, checked. */
export interface CheckedRunFinish {
  id: string;
  status: FinishRunOptions['status'];
  inputTokens: number | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  cachedInputTokens: number | null;
  error: StoredMetadata | null;
  finishReason: string | null;
  provider: string | null;
  model: string | null;
}

function assertTokens(argument: string, value: number | undefined): number | null {
  if (value === undefined) return null;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new InvalidArgumentError({ argument, value, message: 'expected a non-negative integer.' });
  // The columns are int4: a larger count would fail in Postgres with an untyped error.
  if (value > 2_147_483_647)
    throw new InvalidArgumentError({ argument, value, message: 'expected at most 2147483647.' });
  return value;
}

/** Checks `finishRun`'s arguments: a typed error naming the first bad one, before anything is sent. */
export function checkFinishRun(
  runId: string,
  { status, usage = {}, error, finishReason, provider, model }: FinishRunOptions,
  prefix = '',
): CheckedRunFinish {
  const id = assertRunId(runId);
  if (status !== 'completed' && status !== 'failed' && status !== 'cancelled') {
    throw new InvalidArgumentError({
      argument: `${prefix}status`,
      value: status,
      message: 'expected completed, failed or cancelled.',
    });
  }
  return {
    id,
    status,
    inputTokens: assertTokens(`${prefix}usage.inputTokens`, usage.inputTokens),
    outputTokens: assertTokens(`${prefix}usage.outputTokens`, usage.outputTokens),
    reasoningTokens: assertTokens(`${prefix}usage.reasoningTokens`, usage.reasoningTokens),
    cachedInputTokens: assertTokens(`${prefix}usage.cachedInputTokens`, usage.cachedInputTokens),
    error: error === undefined ? null : validateMetadata(error),
    finishReason: assertOptionalText(`${prefix || 'options.'}finishReason`, finishReason, 200),
    provider: assertOptionalText(`${prefix || 'options.'}provider`, provider, 200),
    model: assertOptionalText(`${prefix || 'options.'}model`, model, 200),
  };
}

/**
 * Finishes the run in the caller's transaction (the provider and model only where it has none); a finished run
 * comes back unchanged; undefined when the tenant has no such run (or, with `threadId`, not on that thread).
 */
export async function finishRunIn(
  context: StoreContext,
  tx: TenantTransaction,
  { id, provider, model, ...values }: CheckedRunFinish,
  threadId?: string,
): Promise<StoredRun | undefined> {
  const { agentRun } = context.tables;
  const ofRun = and(
    eq(agentRun.tenantId, context.tenantId),
    eq(agentRun.id, id),
    threadId === undefined ? undefined : eq(agentRun.threadId, threadId),
  );
  const [row] = await tx
    .update(agentRun)
    .set({
      ...values,
      provider: sql`coalesce(${agentRun.provider}, ${provider})`,
      model: sql`coalesce(${agentRun.model}, ${model})`,
      finishedAt: sql`greatest(now(), ${agentRun.startedAt})`,
      updatedAt: sql`now()`,
    })
    .where(and(ofRun, sql`${agentRun.finishedAt} is null`))
    .returning(runColumns(context));
  if (row) return row as StoredRun;
  const [existing] = await tx.select(runColumns(context)).from(agentRun).where(ofRun);
  return existing as StoredRun | undefined;
}
