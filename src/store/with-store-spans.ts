import { SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import { inSpan } from '../telemetry/in-span.js';
import { hashId } from '../telemetry/hash-id.js';
import { isMeasured, recordStoreMetrics } from './store-metrics.js';

/**
 * The methods whose first argument is a thread id (a uuid), hashed into `agent_history.thread.id_hash`. A list of
 * names, not a guess from the arguments: `searchMessages`' first argument is the user's query.
 */
const THREAD_FIRST = new Set([
  'getThread',
  'renameThread',
  'updateThreadMetadata',
  'softDeleteThread',
  'deleteThread',
  'forkThread',
  'startRun',
  'appendMessage',
  'beginAssistantMessage',
  'checkpointMessage',
  'finalizeMessage',
  'reopenAssistantMessage',
  'excludeMessages',
  'includeMessages',
  'pinMessage',
  'unpinMessage',
  'getMessage',
  'listMessages',
  'listChatMessages',
  'redactMessage',
  'loadContext',
  'writeSummary',
  'writeSnapshot',
  'listSummaries',
  'appendStreamChunks',
  'readStreamChunks',
  'deleteStreamChunks',
  'subscribeStreamChunks',
]);

/** Whose methods {@link withStoreSpans} wraps: a tenant's store, or the context store of one of its threads. */
export interface StoreSpanScope {
  /** `store` for `forTenant`'s methods, `context-store` for `contextStore(threadId)`'s. */
  kind: 'store' | 'context-store';
  /** The tenant the methods act for. */
  tenantId: string;
  /** The thread a context store is bound to. */
  threadId?: string;
}

/**
 * Wraps every method of `methods` in a span `agent-history.<kind>.<method>`, made active while the method runs, so
 * that what it calls (the database driver's own instrumentation) nests under it, and records the metrics of the
 * methods that feed one (appends, tokens counted, summaries, redactions). With no OpenTelemetry SDK registered the
 * span is the API's non-recording one, no attribute is built and the instruments are the API's no-op ones.
 */
export function withStoreSpans<METHODS extends object>(methods: METHODS, scope: StoreSpanScope): METHODS {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(methods)) {
    if (typeof value !== 'function') {
      wrapped[name] = value;
      continue;
    }
    const spanName = `agent-history.${scope.kind}.${name}`;
    const method = value as (...args: unknown[]) => Promise<unknown>;
    const measured = isMeasured(name);
    wrapped[name] = (...args: unknown[]) =>
      inSpan(
        spanName,
        async (span) => {
          if (span.isRecording()) span.setAttributes(startAttributes(name, scope, args[0]));
          if (!measured) {
            const result = await method(...args);
            if (span.isRecording()) recordResult(span, result);
            return result;
          }
          const startedAt = performance.now();
          let result: unknown;
          try {
            result = await method(...args);
          } catch (error) {
            recordStoreMetrics(name, { error }, startedAt);
            throw error;
          }
          recordStoreMetrics(name, { result }, startedAt);
          if (span.isRecording()) recordResult(span, result);
          return result;
        },
        { kind: SpanKind.CLIENT },
      );
  }
  return wrapped as METHODS;
}

function startAttributes(operation: string, { tenantId, threadId }: StoreSpanScope, first: unknown): Attributes {
  const attributes: Attributes = {
    'db.system.name': 'postgresql',
    'agent_history.operation': operation,
    'agent_history.tenant.id_hash': hashId(tenantId),
  };
  const thread = threadId ?? (THREAD_FIRST.has(operation) && typeof first === 'string' ? first : undefined);
  if (thread !== undefined) attributes['agent_history.thread.id_hash'] = hashId(thread.toLowerCase());
  return attributes;
}

/** `agent_history.rows`: the rows the call returned or changed, read from the result's shape. */
function recordResult(span: Span, result: unknown): void {
  const rows = rowsOf(result);
  if (rows !== undefined) span.setAttribute('agent_history.rows', rows);
  const { created, stored } = (result ?? {}) as { created?: unknown; stored?: { byteSize?: unknown } };
  if (typeof created === 'boolean') span.setAttribute('agent_history.append.created', created);
  const bytes = stored?.byteSize ?? (result as { byteSize?: unknown } | undefined)?.byteSize;
  if (typeof bytes === 'number') span.setAttribute('agent_history.message.bytes', bytes);
}

function rowsOf(result: unknown): number | undefined {
  if (result === undefined || result === null) return 0;
  if (typeof result === 'number') return result; // a count of rows deleted
  if (Array.isArray(result)) return result.length;
  if (typeof result !== 'object') return undefined;
  const page = result as Record<string, unknown>;
  for (const key of ['messages', 'threads', 'batches'])
    if (Array.isArray(page[key])) return (page[key] as unknown[]).length;
  if (Array.isArray(page.tail) && Array.isArray(page.pinned)) return page.tail.length + page.pinned.length;
  if ('stored' in page || typeof page.id === 'string') return 1;
  return undefined;
}
