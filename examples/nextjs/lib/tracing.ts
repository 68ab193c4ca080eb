import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { OpenTelemetry } from '@ai-sdk/otel';
import { registerTelemetry } from 'ai';

/**
 * Prints each chat turn's trace to the server's console when the turn's span ends (once its answer is stored): the
 * route's phases, the context engine's compactions, every store call, and the AI SDK's own spans (`invoke_agent`,
 * `step`, `chat`, `execute_tool`), one line each, indented under its parent, with its duration and a few figures.
 * An application sends its spans to a tracing backend instead: see the package's docs/tracing.md.
 */
class TurnConsoleExporter implements SpanExporter {
  private readonly ended = new Map<string, ReadableSpan[]>();

  export(spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    for (const span of spans) {
      const traceId = span.spanContext().traceId;
      const ofTrace = [...(this.ended.get(traceId) ?? []), span];
      this.ended.set(traceId, ofTrace);
      if (span.name === 'agent-history.chat.turn') {
        console.log(`trace ${traceId}\n${treeOf(span, ofTrace, 1).join('\n')}`);
        this.ended.delete(traceId);
      }
    }
    // Traces with no chat turn (a page, a search) are forgotten, oldest first, beyond the last hundred.
    for (const traceId of [...this.ended.keys()].slice(0, Math.max(0, this.ended.size - 100)))
      this.ended.delete(traceId);
    done({ code: 0 }); // ExportResultCode.SUCCESS
  }

  async shutdown(): Promise<void> {
    this.ended.clear();
  }
}

const FIGURES = [
  'agent_history.rows',
  'agent_history.append.batch_size',
  'agent_history.message.status',
  'agent_history.context.tokens.before',
  'agent_history.context.tokens.after',
  'agent_history.context.budget.utilization',
  'agent_history.context.summary.status',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'error.type',
];

function treeOf(span: ReadableSpan, spans: ReadableSpan[], depth: number): string[] {
  const [seconds, nanoseconds] = span.duration;
  const milliseconds = (seconds * 1e3 + nanoseconds / 1e6).toFixed(1);
  const figures = FIGURES.filter((key) => span.attributes[key] !== undefined)
    .map((key) => `${key.split('.').slice(-2).join('.')}=${String(span.attributes[key])}`)
    .join(' ');
  const line = `${'  '.repeat(depth)}${span.name} ${milliseconds} ms${figures ? ` ${figures}` : ''}`;
  const children = spans
    .filter((child) => child.parentSpanContext?.spanId === span.spanContext().spanId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  return [line, ...children.flatMap((child) => treeOf(child, spans, depth + 1))];
}

// Off with TRACE_TURNS=0. The context manager makes spans nest across awaits; the AI SDK's OpenTelemetry integration
// makes its spans children of the route's `agent-history.chat.stream` phase, so that a turn is one trace.
if (process.env.TRACE_TURNS !== '0') {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new TurnConsoleExporter())] }),
  );
  registerTelemetry(new OpenTelemetry());
}
