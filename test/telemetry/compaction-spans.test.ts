import { randomUUID } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createContextManager, createOfflineSummarizer } from '../../src/ai-sdk/index.js';
import { createAgentHistory } from '../../src/index.js';
import type { ContextReport } from '../../src/context/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { stringsOf, useInMemoryTracing } from '../support/in-memory-tracing.js';
import { assistantMessage, range, userMessage } from '../support/fixtures.js';

const tracing = useInMemoryTracing();
const COMPACT = 'agent-history.context.compact';
const words = (count: number, word: string) => Array.from({ length: count }, () => word).join(' ');

describe.each(BACKENDS)('compaction spans on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** A thread of 20 turns of about 120 tokens each, and a manager whose budget (1,000 tokens) holds a few. */
  async function longThread() {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    for (const turn of range(1, 20)) {
      await store.appendMessage(thread.id, userMessage(`u-${turn}`, `Question ${turn}: ${words(40, 'wherefore')}`));
      await store.appendMessage(thread.id, assistantMessage(`a-${turn}`, `Answer ${turn}: ${words(80, 'because')}`));
    }
    await store.appendMessage(thread.id, userMessage('newest', 'And now?'));
    const reports: ContextReport[] = [];
    const context = createContextManager({
      store: store.contextStore(thread.id),
      model: 'gpt-4o',
      maxInputTokens: 1000,
      summarizer: createOfflineSummarizer(),
      onReport: (report) => reports.push(report),
    });
    return { context, reports };
  }

  it("should record the initial compaction with its report's figures, as the parent of its store calls", async () => {
    const { context, reports } = await longThread();
    await context.initialMessages();
    const [span] = tracing.named(COMPACT);
    const report = reports.at(-1)!;
    const saved = report.stages.reduce((total, stage) => total + stage.tokensSaved, 0);
    expect(saved).toBeGreaterThan(0);
    expect(span!.attributes).toMatchObject({
      'agent_history.context.trigger': 'initial-messages',
      'agent_history.context.changed': true,
      'agent_history.context.messages': report.messageCount,
      'agent_history.context.tokens.after': report.estimatedTokens,
      'agent_history.context.tokens.before': report.estimatedTokens + saved,
      'agent_history.context.tokens.saved': saved,
      'agent_history.context.budget.max_input_tokens': 1000,
      'agent_history.context.budget.available_tokens': report.budget.availableTokens,
      'agent_history.context.budget.history_tokens': report.budget.historyTokens,
      'agent_history.context.budget.utilization':
        Math.round((report.budget.historyTokens / report.budget.availableTokens) * 1e4) / 1e4,
      'agent_history.context.summary.status': 'created',
      'agent_history.context.snapshot.status': 'written',
      'agent_history.context.snapshot.version': report.snapshot.version,
    });
    expect(report.snapshot.version).toBe(1);
    expect(span!.attributes['agent_history.context.step']).toBeUndefined();
    const children = tracing
      .spans()
      .filter((child) => child.parentSpanContext?.spanId === span!.spanContext().spanId)
      .map((child) => child.name);
    expect(children).toEqual(
      expect.arrayContaining([
        'agent-history.context-store.loadContext',
        'agent-history.context-store.writeSummary',
        'agent-history.context-store.writeSnapshot',
      ]),
    );
    const strings = tracing.spans().flatMap(stringsOf);
    expect(strings.filter((value) => /wherefore|because|Question|Answer/.test(value))).toEqual([]);
  });

  it('should record a step only when its compaction changed the messages', async () => {
    const { context, reports } = await longThread();
    const initial = await context.initialMessages();
    const step = (messages: ModelMessage[], stepNumber: number) =>
      context.prepareStep({ messages, stepNumber, steps: [] } as never);
    expect(await step(initial, 0)).toBeUndefined();
    expect(tracing.named(COMPACT)).toHaveLength(1); // the initial one only
    const grown: ModelMessage[] = [
      ...initial,
      { role: 'assistant', content: [{ type: 'text', text: words(1500, 'meanwhile') }] },
      { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    ];
    expect(await step(grown, 1)).toBeDefined();
    const spans = tracing.named(COMPACT);
    expect(spans).toHaveLength(2);
    expect(spans[1]!.attributes).toMatchObject({
      'agent_history.context.trigger': 'prepare-step',
      'agent_history.context.step': 1,
      'agent_history.context.changed': true,
      'agent_history.context.tokens.after': reports.at(-1)!.estimatedTokens,
    });
    expect(spans[1]!.endTime[0] * 1e9 + spans[1]!.endTime[1]).toBeGreaterThan(
      spans[1]!.startTime[0] * 1e9 + spans[1]!.startTime[1],
    );
  });
});
