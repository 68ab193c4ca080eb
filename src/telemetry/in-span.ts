import type { Span, SpanKind } from '@opentelemetry/api';
import { tracer } from './tracer.js';
import { recordSpanError } from './record-span-error.js';

/**
 * Runs `run` in an active span named `name` (of `kind`, default internal), so that the spans of what it calls are its
 * children. The span ends when `run` settles, or, with `until`, when the promise `until` returns for the result
 * settles (a phase that goes on after it returns, such as a streamed answer). A failure records the error's code (see
 * `recordSpanError`). Internal.
 */
export function inSpan<RESULT>(
  name: string,
  run: (span: Span) => Promise<RESULT>,
  { until, kind }: { until?: (result: RESULT, span: Span) => Promise<unknown>; kind?: SpanKind } = {},
): Promise<RESULT> {
  return tracer.startActiveSpan(name, { kind }, async (span) => {
    let result: RESULT;
    try {
      result = await run(span);
    } catch (error) {
      recordSpanError(span, error);
      span.end();
      throw error;
    }
    if (!until) span.end();
    else
      until(result, span).then(
        () => span.end(),
        (error: unknown) => {
          recordSpanError(span, error);
          span.end();
        },
      );
    return result;
  });
}
