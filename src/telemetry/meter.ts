import { metrics, type Counter, type Histogram, type MeterProvider } from '@opentelemetry/api';
import { TRACER_NAME } from './tracer.js';

/** The package's instruments (see docs/tracing.md, "Metrics"). Internal. */
export interface Instruments {
  /** `agent_history.appends`: messages appended (`appendMessage`, `beginAssistantMessage`), by outcome. */
  appends: Counter;
  /** `agent_history.append.duration`: an append's time, in seconds, from the call to its stored row. */
  appendDuration: Histogram;
  /** `agent_history.tokens.counted`: tokens counted for messages as they were stored. */
  tokensCounted: Counter;
  /** `agent_history.context.tokens_saved`: tokens a compaction's stages saved, by stage. */
  tokensSaved: Counter;
  /** `agent_history.context.budget.utilization`: the share of the history's budget a compaction used. */
  budgetUtilization: Histogram;
  /** `agent_history.summaries.written`: summaries stored. */
  summariesWritten: Counter;
  /** `agent_history.redactions`: messages redacted. */
  redactions: Counter;
  /** `agent_history.streams.resumed`: answers in progress replayed to a client that reconnected. */
  streamsResumed: Counter;
}

let cached: { provider: MeterProvider; instruments: Instruments } | undefined;

/**
 * The package's instruments, made by a meter named `agent-history` of the global meter provider. Unlike the tracer,
 * `metrics.getMeter` is not a proxy: a meter taken before the application registers its SDK would stay a no-op, so
 * the instruments are made again whenever the global provider is another one (a comparison, with no SDK). Internal.
 */
export function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (cached?.provider === provider) return cached.instruments;
  const meter = provider.getMeter(TRACER_NAME);
  const made: Instruments = {
    appends: meter.createCounter('agent_history.appends', {
      description: 'Messages appended (a retry that found its row counts with created=false)',
      unit: '{message}',
    }),
    appendDuration: meter.createHistogram('agent_history.append.duration', {
      description: 'Time of an append, from the call to its stored row',
      unit: 's',
    }),
    tokensCounted: meter.createCounter('agent_history.tokens.counted', {
      description: 'Tokens counted for messages as they were stored',
      unit: '{token}',
    }),
    tokensSaved: meter.createCounter('agent_history.context.tokens_saved', {
      description: "Tokens saved by a compaction's stages",
      unit: '{token}',
    }),
    budgetUtilization: meter.createHistogram('agent_history.context.budget.utilization', {
      description: 'History tokens sent over the tokens available to the history',
      unit: '1',
    }),
    summariesWritten: meter.createCounter('agent_history.summaries.written', {
      description: 'Summaries stored',
      unit: '{summary}',
    }),
    redactions: meter.createCounter('agent_history.redactions', {
      description: 'Messages redacted',
      unit: '{message}',
    }),
    streamsResumed: meter.createCounter('agent_history.streams.resumed', {
      description: 'Answers in progress replayed to a client that reconnected',
      unit: '{stream}',
    }),
  };
  cached = { provider, instruments: made };
  return made;
}
