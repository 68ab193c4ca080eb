import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  createContextEngine,
  rebuildContextFromSnapshot,
  type ContextPolicyInput,
  type MemorySegmentsStageReport,
} from '../../../src/context/index.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { createMemoryContextStore, createSharedMemory, type SharedMemory } from '../../../src/testing/index.js';
import { countStoredMessageTokens, storedTokenCountId } from '../../../src/tokens/count-stored-message-tokens.js';
import { InvalidArgumentError } from '../../../src/errors/index.js';
import { assistant, smallProfile, text, tokenCounter, unref, user, words } from '../fixtures.js';

const preference = 'Please always answer in metric units, I live in Lyon.';
const question = 'Which units should the bike ride estimate use?';

function threadOf(shared: SharedMemory, threadId: string, userId: string | null, messages: ContextUIMessage[]) {
  const store = createMemoryContextStore({ memory: { shared, threadId, userId } });
  for (const message of messages)
    store.appendMessage({
      message,
      tokenCount: countStoredMessageTokens({ message, tokenCounter }),
      tokenCounterId: storedTokenCountId(tokenCounter),
    });
  return store;
}

const turns = (count: number, size = 60) =>
  Array.from({ length: count }, (_unused, index) => [
    user(`u${index}`, `Ride ${index}: ${words(size, `stage${index}`)}`),
    assistant(`a${index}`, text(`Noted ride ${index}. ${words(size, 'detail')}`)),
  ]).flat();

function engineFor(
  store: ReturnType<typeof createMemoryContextStore>,
  contextWindow: number,
  policy: ContextPolicyInput = {},
) {
  return createContextEngine({
    store,
    profile: smallProfile(contextWindow, 200),
    tokenCounter,
    policy: {
      summary: { reserveTokens: 100 },
      ...policy,
      memory: { workingMemory: 'include', ...policy.memory, recall: { mode: 'auto', ...policy.memory?.recall } },
    },
    _internal: { now: () => 0 },
  });
}

const textOf = (message: ModelMessage) => JSON.stringify(message.content);
const memoryReport = (stages: readonly { stage: string }[]) =>
  stages.find((stage) => stage.stage === 'memory-segments') as MemorySegmentsStageReport | undefined;

async function sharedWithPreference(scope: 'user' | 'thread' = 'user') {
  const shared = createSharedMemory({ scope });
  const first = threadOf(shared, 't1', 'alice', [user('p1', preference), assistant('p2', text('Metric it is.'))]);
  await first.updateWorkingMemory!({ content: '# Alice\n- Units: metric', expectedVersion: 0 });
  return shared;
}

describe('working memory and recalled items in the context', () => {
  it('should put the working memory, then the recalled items, after the instructions and before the history', async () => {
    const shared = await sharedWithPreference();
    const second = threadOf(shared, 't2', 'alice', [...turns(2), user('q', question)]);
    const { messages, report } = await engineFor(second, 8000).buildInitialContext();
    expect(unref(messages.slice(0, 2))).toEqual([
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: '[Working memory about the user, kept across conversations (version 1). To change it, pass expectedVersion 1.]\n\n# Alice\n- Units: metric',
          },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: `[Recalled from an earlier conversation with this user. The user wrote:]\n\n${preference}`,
          },
        ],
      },
    ]);
    expect(textOf(messages[2]!)).toContain('Ride 0');
    expect(memoryReport(report.stages)).toMatchObject({
      recall: 'full-text',
      workingMemory: { id: 'working-memory-1', version: 1, included: true },
      recalled: [{ id: 'message:p1', version: 1, included: true, source: { threadId: 't1', sequence: 1 } }],
      removed: [],
    });
  });

  it("should never recall another user's thread or another shared memory's (another tenant's)", async () => {
    const shared = await sharedWithPreference();
    const otherTenant = createSharedMemory();
    threadOf(otherTenant, 't9', 'bob', [user('x1', preference)]);
    const bob = threadOf(shared, 't3', 'bob', [user('q', question)]);
    const { messages, report } = await engineFor(bob, 8000).buildInitialContext();
    expect(JSON.stringify(messages)).not.toContain('metric');
    expect(memoryReport(report.stages)).toMatchObject({ workingMemory: null, recalled: [] });
    const anonymous = threadOf(shared, 't4', null, [user('q', question)]);
    expect(JSON.stringify((await engineFor(anonymous, 8000).buildInitialContext()).messages)).not.toContain('metric');
  });

  it('should keep working memory per thread with scope thread', async () => {
    const shared = await sharedWithPreference('thread');
    const second = threadOf(shared, 't2', 'alice', [user('q', question)]);
    const { report } = await engineFor(second, 8000).buildInitialContext();
    expect(memoryReport(report.stages)?.workingMemory).toBeNull();
    expect(memoryReport(report.stages)?.recalled).toHaveLength(1);
  });

  it('should drop recalled items lowest score first, then the working memory, and never cost the history a token', async () => {
    const history = [...turns(6), user('q', question)];
    const keptCounts: number[] = [];
    for (let window = 1400; window <= 2000; window += 20) {
      const shared = createSharedMemory();
      const first = threadOf(shared, 't1', 'alice', [
        user('r1', `bike ride units ${words(30, 'alpha')}`),
        user('r2', `bike ride ${words(30, 'beta')}`),
        user('r3', `bike ${words(30, 'gamma')}`),
      ]);
      await first.updateWorkingMemory!({ content: words(40, 'memo'), expectedVersion: 0 });
      const withMemory = await engineFor(threadOf(shared, 't2', 'alice', history), window).buildInitialContext();
      const without = await engineFor(
        threadOf(createSharedMemory(), 'x', 'alice', history),
        window,
      ).buildInitialContext();
      const report = memoryReport(withMemory.report.stages)!;
      const kept = withMemory.messages.length - without.messages.length;
      keptCounts.push(kept);
      expect(unref(withMemory.messages.slice(kept))).toEqual(unref(without.messages));
      // The kept items are a prefix of: working memory, then the recalled items best first.
      const order = [report.workingMemory!, ...report.recalled];
      expect(order.map((entry) => entry.included)).toEqual(order.map((_entry, index) => index < kept));
      expect(report.recalled.map((entry) => entry.id)).toEqual(['message:r1', 'message:r2', 'message:r3']);
      expect(withMemory.report.budget.availableTokens).toBeGreaterThanOrEqual(withMemory.report.budget.historyTokens);
    }
    // Every case is met: none kept, the working memory alone, with one, two or three items.
    expect(new Set(keptCounts)).toEqual(new Set([0, 1, 2, 3, 4]));
  });

  it('should drop memory larger than the whole budget, and send nothing over it', async () => {
    const shared = createSharedMemory();
    const first = threadOf(shared, 't1', 'alice', []);
    await first.updateWorkingMemory!({ content: words(5000, 'huge'), expectedVersion: 0 });
    const second = threadOf(shared, 't2', 'alice', [...turns(2), user('q', question)]);
    const { messages, report } = await engineFor(second, 2000).buildInitialContext();
    expect(JSON.stringify(messages)).not.toContain('huge');
    expect(memoryReport(report.stages)?.removed).toEqual([
      { sequence: null, reason: 'working-memory-dropped', tokens: expect.any(Number) },
    ]);
    expect(report.budget.availableTokens).toBeGreaterThanOrEqual(report.budget.historyTokens);
  });

  it('should drop memory before history when a step grows, and keep it while it fits', async () => {
    const shared = createSharedMemory();
    const first = threadOf(shared, 't1', 'alice', [user('p1', preference)]);
    await first.updateWorkingMemory!({ content: words(150, 'memo'), expectedVersion: 0 });
    const history = [...turns(2), user('q', question)];
    const engine = engineFor(threadOf(shared, 't2', 'alice', history), 1600);
    const alone = engineFor(threadOf(createSharedMemory(), 't2', 'alice', history), 1600);
    const { messages } = await engine.buildInitialContext();
    const without = (await alone.buildInitialContext()).messages;
    expect(messages.slice(0, 2).map(textOf).join()).toMatch(/Working memory.*Recalled/);
    expect((await engine.prepareStep({ messages, stepNumber: 0 })).messages).toBeUndefined();
    const step = (output: string): ModelMessage[] => [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'route', input: {} }] },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'route', output: { type: 'text', value: output } },
        ],
      },
    ];
    const fits = await engine.prepareStep({ messages: [...messages, ...step(words(100, 'km'))], stepNumber: 1 });
    expect(fits.messages).toBeUndefined();
    // Over the budget with the memory, within it without: the memory goes and the history is sent as it is.
    const grown = await engine.prepareStep({ messages: [...messages, ...step(words(800, 'km'))], stepNumber: 1 });
    const reference = await alone.prepareStep({ messages: [...without, ...step(words(800, 'km'))], stepNumber: 1 });
    expect(reference.messages).toBeUndefined();
    expect(unref(grown.messages)).toEqual(unref([...without, ...step(words(800, 'km'))]));
    expect(memoryReport(grown.report.stages)?.removed.map((removal) => removal.reason)).toEqual([
      'recalled-dropped',
      'working-memory-dropped',
    ]);
    // Over the budget either way: the history is compacted as without the memory (down to the low-water mark),
    // and the memory stays only if it fits in what is left.
    const over = await engine.prepareStep({ messages: [...messages, ...step(words(1500, 'km'))], stepNumber: 1 });
    const compacted = await alone.prepareStep({ messages: [...without, ...step(words(1500, 'km'))], stepNumber: 1 });
    const isMemory = (message: ModelMessage) => /\[(Working memory|Recalled from)/.test(textOf(message));
    expect(unref(over.messages!.filter((message) => !isMemory(message)))).toEqual(unref(compacted.messages));
  });

  it('should record the memory in the snapshot, and rebuild exactly what the model saw', async () => {
    const shared = await sharedWithPreference();
    const second = threadOf(shared, 't2', 'alice', [...turns(12), user('q', question)]);
    const { messages, report } = await engineFor(second, 2400).buildInitialContext();
    expect(report.snapshot.status).toBe('written');
    const snapshot = second.snapshots.at(-1)!;
    expect(snapshot.pruned).toMatchObject({
      workingMemory: { id: 'working-memory-1', version: 1 },
      recalled: [
        { id: 'message:p1', sourceThreadId: 't1', sourceMessageId: 'p1', sourceSequence: 1, sourceContentVersion: 1 },
      ],
    });
    const memory = await second.loadMemory!({ query: question, limit: 5 });
    const rebuilt = rebuildContextFromSnapshot({
      snapshot,
      summary: null,
      messages: second.messages,
      tokenCounter,
      memory,
    });
    expect(rebuilt.matches).toBe(true);
    expect(rebuilt.messages).toEqual(unref(messages).slice(0, rebuilt.messages.length));
    const first = createMemoryContextStore({ memory: { shared, threadId: 't1b', userId: 'alice' } });
    await first.updateWorkingMemory!({ content: 'changed', expectedVersion: 1 });
    const changed = await second.loadMemory!({ query: question, limit: 5 });
    expect(() =>
      rebuildContextFromSnapshot({ snapshot, summary: null, messages: second.messages, tokenCounter, memory: changed }),
    ).toThrow(
      new InvalidArgumentError({
        argument: 'memory.workingMemory',
        value: { id: 'working-memory-1', version: 2 },
        message: `expected the snapshot's working memory "working-memory-1" at version 1.`,
      }),
    );
  });

  it('should follow the policy knobs, and refuse a bad one naming it', async () => {
    const shared = await sharedWithPreference();
    const second = threadOf(shared, 't2', 'alice', [user('q', question)]);
    const off = await engineFor(second, 8000, {
      memory: { workingMemory: 'off', recall: { mode: 'off' } },
    }).buildInitialContext();
    expect(memoryReport(off.report.stages)).toBeUndefined();
    const recallOnly = await engineFor(second, 8000, { memory: { workingMemory: 'off' } }).buildInitialContext();
    expect(memoryReport(recallOnly.report.stages)).toMatchObject({
      workingMemory: null,
      recalled: [{ included: true }],
    });
    const capped = await engineFor(second, 8000, { memory: { recall: { maxTokens: 5 } } }).buildInitialContext();
    expect(memoryReport(capped.report.stages)?.recalled).toMatchObject([{ id: 'message:p1', included: false }]);
    expect(() => engineFor(second, 8000, { memory: { recall: { limit: 0 } } })).toThrow(
      /policy\.memory\.recall\.limit.*expected an integer of at least 1/,
    );
    expect(() => engineFor(second, 8000, { memory: { workingMemory: 'always' as never } })).toThrow(
      /policy\.memory\.workingMemory/,
    );
  });
});
