import { and, eq } from 'drizzle-orm';
import { NotFoundError } from '../errors/not-found-error.js';
import type { StoredMetadata } from '../schema/define-agent-tables.js';
import { inTenant, type StoreContext } from './store-context.js';
import { assertOptionalText, assertThreadId } from '../errors/assert-input.js';
import { requireThread } from './require-thread.js';
import { assertRunId, checkFinishRun, finishRunIn, runColumns, type FinishRunOptions } from './run-finish.js';
import { callInOneStatement, fromColumnNames, IN_TRANSACTION, THREAD_MISSING } from './one-statement-call.js';
import { validateMetadata } from './validate-message.js';
import type { RunUsage, StoredRun } from '../model/stored-rows.js';

/** The options of `startRun`. */
export interface StartRunOptions {
  /** The model provider, e.g. 'openai' (at most 200 characters). @default null */
  provider?: string;
  /** The model id, e.g. 'gpt-5' (at most 200 characters). @default null */
  model?: string;
  /** Any JSON object the application keeps with the run. @default {} */
  metadata?: StoredMetadata;
}

export type { FinishRunOptions } from './run-finish.js';

/** The options of `failRun`. */
export interface FailRunOptions {
  /** What went wrong: an `Error` is stored as `{ name, message }`, anything else as `{ message: String(error) }`. */
  error: unknown;
  /** The token usage the provider reported before the failure. @default none (the columns stay null) */
  usage?: RunUsage;
}

/** Starts a run (status `running`) on a live thread. */
export async function startRun(
  context: StoreContext,
  threadId: string,
  options: StartRunOptions = {},
): Promise<StoredRun> {
  const thread = assertThreadId(threadId);
  const metadata = validateMetadata(options.metadata);
  const provider = assertOptionalText('options.provider', options.provider, 200);
  const model = assertOptionalText('options.model', options.model, 200);
  await context.checkRowLevelSecurity();
  const rows = await callInOneStatement<Record<string, unknown>>(context, 'agent_history_start_run', [
    { uuid: thread },
    { text: provider },
    { text: model },
    { jsonb: JSON.stringify(metadata) },
  ]);
  if (rows !== IN_TRANSACTION) return oneRun(context, rows, { entity: 'thread', id: threadId });
  return inTenant(context, async (tx) => {
    const { userId } = await requireThread(context, tx, thread);
    const [row] = await tx
      .insert(context.tables.agentRun)
      .values({ tenantId: context.tenantId, threadId: thread, userId, status: 'running', provider, model, metadata })
      .returning(runColumns(context));
    return row as StoredRun;
  });
}

/** Ends a run with its status and token usage. Finishing a finished run again returns it unchanged. */
export async function finishRun(context: StoreContext, runId: string, options: FinishRunOptions): Promise<StoredRun> {
  const finish = checkFinishRun(runId, options);
  await context.checkRowLevelSecurity();
  const rows = await callInOneStatement<Record<string, unknown>>(context, 'agent_history_finish_run', [
    { uuid: finish.id },
    { text: finish.status },
    { integer: finish.inputTokens },
    { integer: finish.outputTokens },
    { integer: finish.reasoningTokens },
    { integer: finish.cachedInputTokens },
    { jsonb: finish.error === null ? null : JSON.stringify(finish.error) },
    { text: finish.finishReason },
    { text: finish.provider },
    { text: finish.model },
  ]);
  if (rows !== IN_TRANSACTION) return oneRun(context, rows, { entity: 'run', id: runId });
  return inTenant(context, async (tx) => {
    const run = await finishRunIn(context, tx, finish);
    if (!run) throw new NotFoundError({ entity: 'run', id: runId });
    return run;
  });
}

/** The run a one-statement function returned, or {@link NotFoundError} for `missing` when it returned none. */
function oneRun(
  context: StoreContext,
  rows: Array<Record<string, unknown>> | typeof THREAD_MISSING,
  missing: { entity: 'thread' | 'run'; id: unknown },
): StoredRun {
  const [row] = rows === THREAD_MISSING ? [] : rows;
  if (!row) throw new NotFoundError(missing);
  return fromColumnNames<StoredRun>(runColumns(context), row);
}

/** Ends a run as failed, recording the error's name and message. */
export function failRun(context: StoreContext, runId: string, { error, usage }: FailRunOptions): Promise<StoredRun> {
  const details = error instanceof Error ? { name: error.name, message: error.message } : { message: String(error) };
  return finishRun(context, runId, { status: 'failed', usage, error: details });
}

/** One run of the tenant, or {@link NotFoundError}. */
export function getRun(context: StoreContext, runId: string): Promise<StoredRun> {
  const id = assertRunId(runId);
  const { agentRun } = context.tables;
  return inTenant(context, async (tx) => {
    const [row] = await tx
      .select(runColumns(context))
      .from(agentRun)
      .where(and(eq(agentRun.tenantId, context.tenantId), eq(agentRun.id, id)));
    if (!row) throw new NotFoundError({ entity: 'run', id: runId });
    return row as StoredRun;
  });
}
