import type { Attributes } from '@opentelemetry/api';
import { instruments } from '../telemetry/meter.js';
import { errorType } from '../telemetry/record-span-error.js';

/** The store methods that feed a metric; every other method is neither timed nor counted. */
const MEASURED = new Set([
  'appendMessage',
  'beginAssistantMessage',
  'finalizeMessage',
  'writeSummary',
  'redactMessage',
]);
const APPENDS = new Set(['appendMessage', 'beginAssistantMessage']);

/** Whether {@link recordStoreMetrics} has anything to record for `operation` (so that it is timed). */
export const isMeasured = (operation: string): boolean => MEASURED.has(operation);

/**
 * Records what one store call adds to the package's metrics: an append (its outcome and its time), the tokens counted
 * for a message it stored, a summary written, a message redacted. `startedAt` is the call's `performance.now()`.
 */
export function recordStoreMetrics(
  operation: string,
  outcome: { result?: unknown; error?: unknown },
  startedAt: number,
) {
  const meters = instruments();
  const failed = 'error' in outcome;
  if (APPENDS.has(operation)) {
    const attributes: Attributes = { 'agent_history.operation': operation };
    if (failed) attributes['error.type'] = errorType(outcome.error);
    meters.appendDuration.record((performance.now() - startedAt) / 1000, attributes);
    const { created } = (outcome.result ?? {}) as { created?: unknown };
    if (typeof created === 'boolean') attributes['agent_history.append.created'] = created;
    meters.appends.add(1, attributes);
  }
  if (failed) return;
  const tokens = storedTokenCount(operation, outcome.result);
  if (tokens > 0) meters.tokensCounted.add(tokens, { 'agent_history.operation': operation });
  if (operation === 'writeSummary') meters.summariesWritten.add(1);
  if (operation === 'redactMessage') meters.redactions.add(1);
}

// A new user message is counted when it is appended, an answer when it is finalized; a retry counted nothing.
function storedTokenCount(operation: string, result: unknown): number {
  const { created, stored, tokenCount } = (result ?? {}) as {
    created?: unknown;
    stored?: { tokenCount?: unknown };
    tokenCount?: unknown;
  };
  const count =
    operation === 'appendMessage' && created === true
      ? stored?.tokenCount
      : operation === 'finalizeMessage'
        ? tokenCount
        : undefined;
  return typeof count === 'number' ? count : 0;
}
