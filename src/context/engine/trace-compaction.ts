import type { Span } from '@opentelemetry/api';
import { inSpan } from '../../telemetry/in-span.js';
import { tracer } from '../../telemetry/tracer.js';
import { recordSpanError } from '../../telemetry/record-span-error.js';
import type { ContextReport } from '../contracts/context-report.js';
import { contextReportAttributes } from './context-report-attributes.js';
import { recordContextMetrics } from './record-context-metrics.js';

/** The name of every compaction's span. */
export const COMPACTION_SPAN = 'agent-history.context.compact';

/**
 * Runs the initial compaction in an active span, so that the store calls it makes (loading the thread, writing a
 * summary and a snapshot) are its children; the report becomes the span's attributes and feeds the metrics.
 */
export function traceInitialCompaction<RESULT extends { report: ContextReport }>(
  run: () => Promise<RESULT>,
): Promise<RESULT> {
  return inSpan(COMPACTION_SPAN, async (span) => {
    const result = await run();
    recordContextMetrics(result.report);
    if (span.isRecording()) span.setAttributes(contextReportAttributes(result.report));
    return result;
  });
}

/**
 * Runs a step's compaction and records a span for it afterwards, from its start, only when it changed the
 * messages or failed: a step that changes nothing (most of them) leaves no span beside the AI SDK's own step span,
 * only its figures in the metrics.
 * The store calls such a step makes are the span's siblings, since it does not exist while they run.
 */
export async function traceStepCompaction<RESULT extends { report: ContextReport }>(
  run: () => Promise<RESULT>,
): Promise<RESULT> {
  const startTime = performance.timeOrigin + performance.now();
  let result: RESULT;
  try {
    result = await run();
  } catch (error) {
    endSpan(tracer.startSpan(COMPACTION_SPAN, { startTime }), undefined, error);
    throw error;
  }
  recordContextMetrics(result.report);
  if (result.report.changed) endSpan(tracer.startSpan(COMPACTION_SPAN, { startTime }), result.report);
  return result;
}

function endSpan(span: Span, report: ContextReport | undefined, error?: unknown): void {
  if (report && span.isRecording()) span.setAttributes(contextReportAttributes(report));
  if (error !== undefined) recordSpanError(span, error);
  span.end();
}
