// What the package's spans and metrics cost when the application registers no OpenTelemetry SDK: each span is the
// API's non-recording one and each instrument the API's no-op one. Side by side, in alternating rounds:
//   1. the store wrapper (`withStoreSpans`) around a method that returns at once, against the bare method;
//   2. a step's compaction wrapper (`traceStepCompaction`, spans and metrics) around a compaction that returns a
//      report at once, against the bare compaction;
//   3. appends on PGlite through the tenant's store, against the same store wrapped once more (what one more wrapper
//      adds to a real append: CPU of this process, PGlite included);
//   4. `prepareStep` of the context manager on a 600-message thread (what one step costs, for scale).
//
//   npx tsx bench/telemetry-cost.ts
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { trace } from '@opentelemetry/api';
import { createAgentHistory, migrate } from '../src/index.js';
import { withStoreSpans } from '../src/store/with-store-spans.js';
import { traceStepCompaction } from '../src/context/engine/trace-compaction.js';
import type { ContextReport } from '../src/context/index.js';
import { runPrepareStepBench } from './prepare-step.js';
import { percentile, round } from './stats.js';

const cpuMicroseconds = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** Nanoseconds of CPU per call of each side, the median over `rounds` alternating rounds of `calls` calls. */
async function sideBySide(
  sides: Record<string, () => Promise<unknown>>,
  { rounds, calls }: { rounds: number; calls: number },
): Promise<Record<string, { medianNs: number; p90Ns: number }>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++)
    for (const [name, run] of Object.entries(sides)) {
      const start = cpuMicroseconds();
      for (let call = 0; call < calls; call++) await run();
      samples[name]!.push(((cpuMicroseconds() - start) * 1000) / calls);
    }
  return Object.fromEntries(
    Object.entries(samples).map(([name, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return [name, { medianNs: round(percentile(sorted, 50), 1), p90Ns: round(percentile(sorted, 90), 1) }];
    }),
  );
}

const scope = { kind: 'store' as const, tenantId: randomUUID() };

async function wrapperCost() {
  const appended = { stored: { tokenCount: 12, byteSize: 140 }, created: true };
  const methods = { appendMessage: async (_threadId: string, _message: unknown) => appended };
  const wrapped = withStoreSpans(methods, scope);
  const threadId = randomUUID();
  return sideBySide(
    {
      bare: () => methods.appendMessage(threadId, {}),
      wrapped: () => wrapped.appendMessage(threadId, {}),
    },
    { rounds: 15, calls: 20_000 },
  );
}

async function stepWrapperCost() {
  const report = {
    trigger: 'prepare-step',
    stepNumber: 3,
    changed: false,
    messageCount: 40,
    estimatedTokens: 9000,
    stages: ['validate', 'filter', 'convert', 'prune', 'select', 'trim'].map((stage) => ({
      stage,
      removed: [],
      tokensSaved: stage === 'prune' ? 120 : 0,
    })),
    budget: { historyTokens: 8000, availableTokens: 100_000 },
  } as unknown as ContextReport;
  const compaction = async () => ({ report });
  return sideBySide(
    { bare: () => compaction(), wrapped: () => traceStepCompaction(compaction) },
    { rounds: 15, calls: 20_000 },
  );
}

async function appendCost() {
  const client = await PGlite.create();
  const db = drizzle({ client });
  await migrate(db);
  const store = createAgentHistory({ db }).forTenant(scope.tenantId);
  const once = { appendMessage: store.appendMessage };
  const twice = withStoreSpans(once, scope);
  const thread = await store.createThread();
  let next = 0;
  const message = () => ({ id: `m-${next++}`, role: 'user' as const, parts: [{ type: 'text' as const, text: 'Hi' }] });
  await sideBySide({ warm: () => once.appendMessage(thread.id, message()) }, { rounds: 1, calls: 200 });
  const result = await sideBySide(
    {
      store: () => once.appendMessage(thread.id, message()),
      'store + one more wrapper': () => twice.appendMessage(thread.id, message()),
    },
    { rounds: 10, calls: 200 },
  );
  await client.close();
  return result;
}

export async function runTelemetryCostBench() {
  const recording = trace.getTracer('probe').startSpan('probe').isRecording();
  if (recording) throw new Error('an OpenTelemetry SDK is registered: this bench measures the cost without one');
  const [wrapper, step, append] = [await wrapperCost(), await stepWrapperCost(), await appendCost()];
  const prepareStep = await runPrepareStepBench({ sizes: [600], steps: 25, baselineSteps: 1 });
  return {
    storeWrapperNs: wrapper,
    stepWrapperNs: step,
    appendCpuNs: append,
    prepareStepMs: prepareStep.map(({ scenario, messages, medianMs, p95Ms }) => ({
      scenario,
      messages,
      medianMs,
      p95Ms,
    })),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  console.log(JSON.stringify(await runTelemetryCostBench(), null, 2));
}
