import { trace, type Tracer } from '@opentelemetry/api';

/** The name of the tracer every span of this package is made by (the OpenTelemetry instrumentation scope). */
export const TRACER_NAME = 'agent-history';

/**
 * The package's tracer, through `@opentelemetry/api`. It records nothing until the application registers an
 * OpenTelemetry SDK (a tracer provider); until then each span is the API's non-recording span, which costs an
 * object and no attributes (callers build them only when `span.isRecording()`). Internal.
 */
export const tracer: Tracer = trace.getTracer(TRACER_NAME);
