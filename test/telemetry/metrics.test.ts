import { randomUUID } from 'node:crypto';
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { createContextManager, createOfflineSummarizer, resumeChatStream } from '../../src/ai-sdk/index.js';
import { createAgentHistory } from '../../src/index.js';
import { instruments } from '../../src/telemetry/meter.js';
import { useTestDatabase } from '../support/test-database.js';
import { useInMemoryMetrics } from '../support/in-memory-metrics.js';
import { assistantMessage, range, userMessage } from '../support/fixtures.js';

const meters = useInMemoryMetrics();
const words = (count: number, word: string) => Array.from({ length: count }, () => word).join(' ');

describe('the metrics', () => {
  const database = useTestDatabase('pglite');
  const newStore = async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    return { store, thread: await store.createThread() };
  };

  it('should count appends by outcome, time each one, and count the tokens of each new message once', async () => {
    const { store, thread } = await newStore();
    const created = { 'agent_history.operation': 'appendMessage', 'agent_history.append.created': true };
    const retried = { ...created, 'agent_history.append.created': false };
    const failed = { 'agent_history.operation': 'appendMessage', 'error.type': 'thread-not-found' };
    const before = {
      created: await meters.total('agent_history.appends', created),
      retried: await meters.total('agent_history.appends', retried),
      failed: await meters.total('agent_history.appends', failed),
      timed: await meters.total('agent_history.append.duration'),
      tokens: await meters.total('agent_history.tokens.counted'),
    };
    const message = userMessage('m-1', words(50, 'lighthouse'));
    const { stored } = await store.appendMessage(thread.id, message);
    await store.appendMessage(thread.id, message); // a retry: found, not stored again
    await expect(store.appendMessage(randomUUID(), userMessage('m-2'))).rejects.toMatchObject({
      code: 'thread-not-found',
    });
    expect(stored.tokenCount).toBeGreaterThan(50);
    expect(await meters.total('agent_history.appends', created)).toBe(before.created + 1);
    expect(await meters.total('agent_history.appends', retried)).toBe(before.retried + 1);
    expect(await meters.total('agent_history.appends', failed)).toBe(before.failed + 1);
    expect(await meters.total('agent_history.append.duration')).toBe(before.timed + 3);
    expect(await meters.total('agent_history.tokens.counted')).toBe(before.tokens + stored.tokenCount!);
    const durations = await meters.points('agent_history.append.duration');
    expect(durations.every((point) => point.sum! > 0 && point.sum! < 60)).toBe(true); // seconds, not milliseconds
  });

  it("should count an answer's tokens when it is finalized, not while it streams", async () => {
    const { store, thread } = await newStore();
    const runId = (await store.startRun(thread.id, { model: 'test' })).id;
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1', runId });
    const before = await meters.total('agent_history.tokens.counted');
    const parts = [{ type: 'text' as const, text: words(30, 'seagull') }];
    await store.checkpointMessage(thread.id, 'a-1', { parts });
    expect(await meters.total('agent_history.tokens.counted')).toBe(before);
    const finalized = await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts });
    expect(finalized.tokenCount).toBeGreaterThan(30);
    expect(await meters.total('agent_history.tokens.counted', { 'agent_history.operation': 'finalizeMessage' })).toBe(
      finalized.tokenCount,
    );
  });

  it('should record the tokens each stage saved, the utilization and the summary a compaction wrote', async () => {
    const { store, thread } = await newStore();
    for (const turn of range(1, 20)) {
      await store.appendMessage(thread.id, userMessage(`u-${turn}`, `Question ${turn}: ${words(40, 'wherefore')}`));
      await store.appendMessage(thread.id, assistantMessage(`a-${turn}`, `Answer ${turn}: ${words(80, 'because')}`));
    }
    await store.appendMessage(thread.id, userMessage('newest', 'And now?'));
    const saved = await meters.points('agent_history.context.tokens_saved');
    const summaries = await meters.total('agent_history.summaries.written');
    const utilization = (await meters.points('agent_history.context.budget.utilization')).length;
    const reports: Array<{ stage: string; tokensSaved: number }[]> = [];
    const context = createContextManager({
      store: store.contextStore(thread.id),
      model: 'gpt-4o',
      maxInputTokens: 1000,
      summarizer: createOfflineSummarizer(),
      onReport: (report) => reports.push(report.stages),
    });
    await context.initialMessages();
    expect(await meters.total('agent_history.summaries.written')).toBe(summaries + 1);
    const stagesSaved = new Map<string, number>();
    for (const stage of reports[0]!)
      stagesSaved.set(stage.stage, (stagesSaved.get(stage.stage) ?? 0) + stage.tokensSaved);
    expect([...stagesSaved.values()].some((tokens) => tokens > 0)).toBe(true);
    for (const [stage, tokens] of stagesSaved) {
      const attributes = { 'agent_history.context.stage': stage, 'agent_history.context.trigger': 'initial-messages' };
      const was = saved.find((point) => point.attributes['agent_history.context.stage'] === stage)?.value ?? 0;
      expect([stage, (await meters.total('agent_history.context.tokens_saved', attributes)) - was]).toEqual([
        stage,
        tokens,
      ]);
    }
    const [histogram] = await meters.points('agent_history.context.budget.utilization');
    expect(histogram!.attributes).toEqual({ 'agent_history.context.trigger': 'initial-messages' });
    expect([utilization, histogram!.count]).toEqual([0, 1]); // one compaction in this file
    expect(histogram!.sum! / histogram!.count!).toBeGreaterThan(0);
    expect(histogram!.sum! / histogram!.count!).toBeLessThanOrEqual(1);
  });

  it('should count a redaction once it is stored, and a replayed answer only when there is one', async () => {
    const { store, thread } = await newStore();
    await store.appendMessage(thread.id, userMessage('m-1', 'my card is 4111 1111 1111 1111'));
    const [redactions, resumed] = [
      await meters.total('agent_history.redactions'),
      await meters.total('agent_history.streams.resumed'),
    ];
    await expect(
      store.redactMessage(thread.id, 'missing', { spans: ['4111'], actor: 'admin', reason: 'PCI' }),
    ).rejects.toThrow();
    await store.redactMessage(thread.id, 'm-1', { spans: ['4111 1111 1111 1111'], actor: 'admin', reason: 'PCI' });
    expect(await meters.total('agent_history.redactions')).toBe(redactions + 1);
    expect(await resumeChatStream({ history: store, threadId: thread.id })).toBeNull();
    expect(await meters.total('agent_history.streams.resumed')).toBe(resumed);
    const runId = (await store.startRun(thread.id, { model: 'test' })).id;
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1', runId });
    const replay = await resumeChatStream({ history: store, threadId: thread.id });
    await replay!.stream.cancel();
    expect(await meters.total('agent_history.streams.resumed')).toBe(resumed + 1);
  });

  it('should follow a meter provider registered after the instruments were first used', async () => {
    const first = instruments();
    expect(instruments()).toBe(first); // the same provider: made once
    const reader = new (class extends MetricReader {
      protected onForceFlush = async () => {};
      protected onShutdown = async () => {};
    })();
    metrics.disable();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    try {
      expect(instruments()).not.toBe(first);
      instruments().redactions.add(1);
      const { resourceMetrics } = await reader.collect();
      const names = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.map((m) => m.descriptor.name));
      expect(names).toEqual(['agent_history.redactions']);
    } finally {
      metrics.disable();
    }
  });
});
