import { createHash } from 'node:crypto';
import { context, trace, type AttributeValue } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/** The spans the package records, as an application's OpenTelemetry SDK would export them, kept in memory. */
export interface InMemoryTracing {
  /** The spans ended since the last test began, in the order they ended. */
  spans(): ReadableSpan[];
  /** The ended spans named `name`. */
  named(name: string): ReadableSpan[];
  /** Forgets the spans ended so far (a test's setup). */
  reset(): void;
}

/**
 * Registers the real OpenTelemetry SDK (a tracer provider exporting to an `InMemorySpanExporter`, and the
 * async-hooks context manager, so active spans nest as in an application) for the tests of the calling file, and
 * unregisters it after them. Spans are cleared after each test.
 */
export function useInMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const contextManager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterEach(() => exporter.reset());
  afterAll(() => {
    trace.disable();
    context.disable();
  });
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    reset: () => exporter.reset(),
  };
}

/** The hash an id is recorded as (`agent_history.*.id_hash`), computed here independently of the package. */
export const idHash = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 16);

/** Every string a span carries: its name, status message, attribute keys and values, and its events' too. */
export function stringsOf(span: ReadableSpan): string[] {
  const values = (attributes: Record<string, AttributeValue | undefined>) =>
    Object.entries(attributes).flatMap(([key, value]) => [key, ...[value ?? []].flat().map(String)]);
  return [
    span.name,
    span.status.message ?? '',
    ...values(span.attributes),
    ...span.events.flatMap((event) => [event.name, ...values(event.attributes ?? {})]),
  ];
}

/**
 * Posts one chat message through `handler`, reads the answer to its end (it must contain `expected`) and waits for
 * the turn's span, which ends once the answer is stored.
 */
export async function postTurn(
  tracing: InMemoryTracing,
  handler: { POST(request: Request): Promise<Response> },
  request: Request,
  expected: string,
): Promise<void> {
  const before = tracing.named('agent-history.chat.turn').length;
  const response = await handler.POST(request);
  expect(response.status).toBe(200);
  expect(await response.text()).toContain(expected);
  await expect.poll(() => tracing.named('agent-history.chat.turn').length).toBe(before + 1);
}
