import type { ModelMessage } from '@ai-sdk/provider-utils';
import { describe, expect, it } from 'vitest';
import {
  ContextEmptyError,
  createContextCalibrator,
  createContextEngine,
  rebuildContextFromSnapshot,
  type ContextPolicyInput,
  type ContextSummarizer,
  type ContextSummarizerInput,
} from '../../../src/context/index.js';
import { renderSummaryText } from '../../../src/context/segments/summary-segment.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import type { MemoryContextStore } from '../../../src/testing/index.js';
import { VersionConflictError } from '../../../src/errors/index.js';
import {
  assistant,
  reasoning,
  smallProfile,
  stepStart,
  storeOf,
  text,
  tokenCounter,
  toolResult,
  unref,
  user,
  words,
} from '../fixtures.js';

const tripTurns = (from: number, to: number): ContextUIMessage[] =>
  Array.from({ length: to - from + 1 }, (_unused, offset) => {
    const turn = from + offset;
    return [
      user(`u${turn}`, `Day ${turn} of the trip: what should we visit? ${words(60, `place${turn}`)}`),
      assistant(
        `a${turn}`,
        stepStart,
        reasoning(`thinking about day ${turn}`),
        toolResult('search', `c${turn}`, { day: turn }, { hits: [`museum ${turn}`, `park ${turn}`] }),
        stepStart,
        text(`On day ${turn}, visit museum ${turn}. ${words(40, 'detail')}`),
      ),
    ];
  }).flat();
const question = (value: string) => user(`q-${value.length}`, value);

const summaryText =
  '## Goals\n- Plan a ten-day trip\n\n## Decisions\n- Museums first\n\n## Facts\n- None.\n\n## Completed actions\n- search\n\n## Open tasks\n- None.';
// Old reasoning goes at every turn here (the default keeps it until the context is over the budget).
const policy: ContextPolicyInput = { summary: { reserveTokens: 200 }, prune: { reasoning: 'outside-newest-turns' } };
const profile = smallProfile(1200, 200);

function recording(answer: (input: ContextSummarizerInput) => Promise<string> = async () => summaryText): {
  summarizer: ContextSummarizer;
  calls: ContextSummarizerInput[];
} {
  const calls: ContextSummarizerInput[] = [];
  return { calls, summarizer: { id: 'fake', summarize: async (input) => (calls.push(input), answer(input)) } };
}

function engineFor(
  store: MemoryContextStore,
  summarizer?: ContextSummarizer,
  extra: Partial<Parameters<typeof createContextEngine>[0]> = {},
) {
  return createContextEngine({
    store,
    profile,
    policy,
    summarizer,
    tokenCounter,
    instructions: 'You plan trips.',
    _internal: { now: () => 0 },
    ...extra,
  });
}

describe('createContextEngine', () => {
  describe('buildInitialContext', () => {
    it('should send the whole thread when it fits, without reasoning of older turns, and write no snapshot', async () => {
      const store = storeOf([...tripTurns(1, 1), question('Anything else?')]);
      const { messages, report } = await engineFor(store).buildInitialContext();
      expect(unref(messages)).toEqual([
        { role: 'user', content: [{ type: 'text', text: String(tripTurns(1, 1)[0]!.parts[0]!.text) }] },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: { day: 1 } }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'search',
              output: { type: 'json', value: { hits: ['museum 1', 'park 1'] } },
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: `On day 1, visit museum 1. ${words(40, 'detail')}` }] },
        { role: 'user', content: [{ type: 'text', text: 'Anything else?' }] },
      ]);
      expect(report.snapshot).toEqual({
        status: 'not-needed',
        version: null,
        throughSequence: null,
        messagesHash: null,
      });
      expect(report.stages.find((stage) => stage.stage === 'convert')).toMatchObject({
        storedCounts: 3,
        countedSequences: [],
      });
      expect(store.snapshots).toEqual([]);
    });

    it('should throw ContextEmptyError when nothing is eligible', async () => {
      const store = storeOf([user('u1', 'hidden')], () => ({ contextState: 'excluded' }));
      await expect(engineFor(store).buildInitialContext()).rejects.toThrowError(
        new ContextEmptyError({ loadedMessages: 1 }),
      );
    });
  });

  describe('summaries', () => {
    it('should fold the oldest turns that do not fit into a summary over an inclusive range, as the first (user) message, and write a snapshot', async () => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      const { summarizer, calls } = recording();
      const { messages, report } = await engineFor(store, summarizer).buildInitialContext();
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ previousSummary: null, fromSequence: 1, maxOutputTokens: 200 });
      const through = calls[0]!.throughSequence;
      expect(calls[0]!.transcript.split('\n').slice(0, 3)).toEqual([
        `[user] Day 1 of the trip: what should we visit? ${words(60, 'place1')}`,
        '[tool call search] {"day":1}',
        '[tool result search] {"hits":["museum 1","park 1"]}',
      ]);
      expect(store.summaries).toEqual([
        {
          id: 'summary-1',
          fromSequence: 1,
          throughSequence: through,
          content: summaryText,
          tokenCount: tokenCounter.count(summaryText),
          policyVersion: 'agent-history/context-v1',
          previousSummaryId: null,
          stale: false,
        },
      ]);
      expect(unref(messages[0])).toEqual({
        role: 'user',
        content: [
          {
            type: 'text',
            text: renderSummaryText({ fromSequence: 1, throughSequence: through, content: summaryText }),
          },
        ],
      });
      expect(unref(messages[1])).toEqual({
        role: 'user',
        content: [{ type: 'text', text: String(store.messages[through]!.message.parts[0]!.text) }],
      });
      expect(messages.some((message) => message.role === 'system')).toBe(false);
      expect(report.stages.find((stage) => stage.stage === 'summarize')).toMatchObject({
        status: 'created',
        summaryId: 'summary-1',
        fromSequence: 1,
        throughSequence: through,
        rounds: 1,
        error: null,
      });
      expect(report.budget.remainingTokens).toBeGreaterThanOrEqual(0);
      expect(store.snapshots).toEqual([
        expect.objectContaining({
          version: 1,
          throughSequence: through,
          summaryId: 'summary-1',
          includedSequences: store.messages
            .filter((message) => message.sequence > through)
            .map((message) => message.sequence),
          policyVersion: 'agent-history/context-v1',
        }),
      ]);
      expect(report.snapshot).toMatchObject({ status: 'written', version: 1, throughSequence: through });
    });

    it('should reuse the summary while the tail fits, calling no summarizer and writing no snapshot', async () => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      await engineFor(store, recording().summarizer).buildInitialContext();
      store.appendMessage({ message: assistant('a-short', text('Day 11: the harbour.')) });
      store.appendMessage({ message: user('u-short', 'And day 12?') });
      const { summarizer, calls } = recording();
      const { messages, report } = await engineFor(store, summarizer).buildInitialContext();
      expect(calls).toEqual([]);
      expect(messages[0]!.content).toEqual([{ type: 'text', text: expect.stringContaining(summaryText) }]);
      expect(report.stages.find((stage) => stage.stage === 'summarize')).toMatchObject({
        status: 'reused',
        summaryId: 'summary-1',
      });
      expect(report.snapshot.status).toBe('not-needed');
      expect(store.snapshots).toHaveLength(1);
    });

    it('should extend the summary incrementally: the previous summary plus the next turns that do not fit', async () => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      await engineFor(store, recording().summarizer).buildInitialContext();
      const firstThrough = store.summaries[0]!.throughSequence;
      for (const message of tripTurns(11, 20)) store.appendMessage({ message });
      store.appendMessage({ message: question('Now pack the bags.') });
      const { summarizer, calls } = recording(
        async (input) => `${summaryText}\n- extended through ${input.throughSequence}`,
      );
      await engineFor(store, summarizer).buildInitialContext();
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ previousSummary: summaryText, fromSequence: 1 });
      expect(calls[0]!.transcript.startsWith(`[user] Day ${firstThrough / 2 + 1} of the trip`)).toBe(true);
      expect(
        store.summaries.map(({ id, fromSequence, throughSequence, previousSummaryId }) => ({
          id,
          fromSequence,
          throughSequence,
          previousSummaryId,
        })),
      ).toEqual([
        { id: 'summary-1', fromSequence: 1, throughSequence: firstThrough, previousSummaryId: null },
        {
          id: 'summary-2',
          fromSequence: 1,
          throughSequence: calls[0]!.throughSequence,
          previousSummaryId: 'summary-1',
        },
      ]);
      expect(store.snapshots.map((snapshot) => [snapshot.version, snapshot.summaryId])).toEqual([
        [1, 'summary-1'],
        [2, 'summary-2'],
      ]);
    });

    it.each([
      [
        'throws',
        async () => {
          throw new Error('rate limited');
        },
        'rate limited',
      ],
      ['returns nothing', async () => '', 'the summarizer returned no text'],
      ['returns whitespace', async () => '  \n ', 'the summarizer returned no text'],
      ['times out', () => new Promise<string>(() => {}), 'the summarizer timed out after 50 ms'],
    ])('should write no summary when the summarizer %s, and trim instead', async (_name, answer, error) => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      const { summarizer } = recording(answer);
      const { messages, report } = await engineFor(store, summarizer, {
        policy: { summary: { reserveTokens: 200, timeoutMs: 50 } },
      }).buildInitialContext();
      expect(store.summaries).toEqual([]);
      expect(report.stages.find((stage) => stage.stage === 'summarize')).toMatchObject({
        status: 'failed',
        summaryId: null,
        error,
      });
      expect(report.budget.remainingTokens).toBeGreaterThanOrEqual(0);
      expect(unref(messages.at(-1))).toEqual({ role: 'user', content: [{ type: 'text', text: 'What about day 11?' }] });
      expect(
        report.stages
          .find((stage) => stage.stage === 'select')!
          .removed.every((removal) => removal.reason === 'turn-trimmed'),
      ).toBe(true);
      expect(store.snapshots).toEqual([expect.objectContaining({ summaryId: null, throughSequence: 0 })]);
    });

    it('should not use a summary that a redaction made stale, and summarize again without the redacted message', async () => {
      const store = storeOf([
        user('u0', 'My passport number is X1234567.'),
        assistant('a0', text('Noted.')),
        ...tripTurns(1, 10),
        question('What about day 11?'),
      ]);
      const userLines = recording(async (input) =>
        [
          input.previousSummary ?? '',
          ...input.transcript
            .split('\n')
            .filter((line) => line.startsWith('[user]'))
            .map((line) => line.slice(0, 50)),
        ]
          .join('\n')
          .trim(),
      );
      await engineFor(store, userLines.summarizer).buildInitialContext();
      expect(store.summaries[0]!.content).toContain('X1234567');
      store.redactMessage(1);
      const { messages } = await engineFor(store, userLines.summarizer).buildInitialContext();
      expect(store.summaries.map((summary) => summary.stale)).toEqual([true, false]);
      expect(store.summaries[1]!.content).not.toContain('X1234567');
      expect(JSON.stringify(messages)).not.toContain('X1234567');
    });
  });

  describe('snapshots', () => {
    it('should let exactly one of two concurrent compactions write each version; the other gets VersionConflictError', async () => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      const results = await Promise.allSettled([
        engineFor(store, recording().summarizer).buildInitialContext(),
        engineFor(store, recording().summarizer).buildInitialContext(),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
      const rejected = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).toBeInstanceOf(VersionConflictError);
      expect(rejected.reason.message).toBe('Stale snapshot version: expected 0, but the current version is 1.');
      expect(store.snapshots.map((snapshot) => snapshot.version)).toEqual([1]);
    });

    it("should report the conflict instead with snapshotConflicts: 'report', and still return the context", async () => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      const reportPolicy: ContextPolicyInput = { summary: { reserveTokens: 200 }, snapshotConflicts: 'report' };
      const [first, second] = await Promise.all([
        engineFor(store, recording().summarizer, { policy: reportPolicy }).buildInitialContext(),
        engineFor(store, recording().summarizer, { policy: reportPolicy }).buildInitialContext(),
      ]);
      expect([first.report.snapshot.status, second.report.snapshot.status].sort()).toEqual(['conflict', 'written']);
      expect(unref(second.messages.at(-1))).toEqual({
        role: 'user',
        content: [{ type: 'text', text: 'What about day 11?' }],
      });
      expect(store.snapshots).toHaveLength(1);
    });

    it('should rebuild the same messages and hash from the snapshot and the log', async () => {
      const big = JSON.stringify(Array.from({ length: 2000 }, (_item, index) => ({ index, value: `value ${index}` })));
      const store = storeOf(
        [
          user('u-pin', 'Remember: I am vegetarian.'),
          assistant('a-pin', text('Noted, vegetarian.')),
          ...tripTurns(1, 10),
          user('u-last', 'Load the restaurant list and mark the vegetarian ones'),
          assistant(
            'a-last',
            stepStart,
            reasoning('fetch it'),
            toolResult('restaurants', 'c-big', { city: 'Rome' }, big),
            stepStart,
            text('Here it is.'),
          ),
        ],
        (index) => ({ pinned: index === 0 }),
      );
      const { messages, report } = await engineFor(store, recording().summarizer, {
        policy: { summary: { reserveTokens: 200 }, memory: { mode: 'search', maxTokens: 100 } },
      }).buildInitialContext();
      expect(report.stages.find((stage) => stage.stage === 'trim')).toMatchObject({
        previews: [{ toolCallId: 'c-big', maxTokens: expect.any(Number) }],
      });
      const snapshot = store.snapshots.at(-1)!;
      expect(snapshot.includedSequences[0]).toBe(1);
      const rebuilt = rebuildContextFromSnapshot({
        snapshot,
        summary: store.summaries.find((summary) => summary.id === snapshot.summaryId)!,
        messages: store.messages,
        tokenCounter,
      });
      expect(rebuilt.messages).toEqual(unref(messages));
      expect(rebuilt.hash).toBe(snapshot.messagesHash);
      expect(rebuilt.matches).toBe(true);
    });

    it('should rebuild exactly after the newest turn lost its old reasoning, a large input and whole rounds', async () => {
      const store = storeOf([
        ...tripTurns(1, 2),
        user('u-last', 'Write the notes, then check all three services.'),
        assistant(
          'a-last',
          stepStart,
          reasoning(words(120, 'plan')),
          toolResult('writeFile', 'c-write', { content: words(1500, 'line') }, { ok: true }),
          stepStart,
          reasoning(words(120, 'more')),
          toolResult('status', 'c-api', { service: 'api' }, { ok: true, log: words(200, 'api') }),
          ...[1, 2, 3, 4, 5, 6].flatMap((round) => [
            stepStart,
            toolResult('status', `c-s${round}`, { service: `s${round}` }, { ok: true, note: words(20, 'fine') }),
          ]),
          stepStart,
          toolResult('status', 'c-db', { service: 'db' }, { ok: false }),
          stepStart,
          reasoning('newest thought'),
          text('The database is down.'),
        ),
      ]);
      const { messages, report } = await engineFor(store, undefined, { maxInputTokens: 250 }).buildInitialContext();
      const trim = report.stages.find((stage) => stage.stage === 'trim')!;
      const reasons = new Set(trim.removed.map((removal) => removal.reason));
      expect([...reasons]).toEqual(
        expect.arrayContaining(['reasoning-pruned', 'tool-output-previewed', 'round-trimmed']),
      );
      expect(report.snapshot.status).toBe('written');
      const snapshot = store.snapshots.at(-1)!;
      const rebuilt = rebuildContextFromSnapshot({ snapshot, summary: null, messages: store.messages, tokenCounter });
      expect(rebuilt.messages).toEqual(unref(messages));
      expect(rebuilt.matches).toBe(true);
      expect(JSON.stringify(messages)).toContain('newest thought');
    });

    it('should write a snapshot when a step compacts stored turns, and rebuild its stored part from the log', async () => {
      const store = storeOf([...tripTurns(1, 6), question('Compare all the days')]);
      const engine = engineFor(store, undefined, { profile: smallProfile(2000, 200) });
      const { messages } = await engine.buildInitialContext();
      expect(store.snapshots).toEqual([]);
      const notes = words(900, 'note');
      const step = [
        ...messages,
        {
          role: 'assistant' as const,
          content: [
            { type: 'reasoning' as const, text: 'compare' },
            { type: 'tool-call' as const, toolCallId: 'c-notes', toolName: 'notes', input: {} },
          ],
        },
        {
          role: 'tool' as const,
          content: [
            {
              type: 'tool-result' as const,
              toolCallId: 'c-notes',
              toolName: 'notes',
              output: { type: 'text' as const, value: notes },
            },
          ],
        },
      ];
      const result = await engine.prepareStep({ messages: step, stepNumber: 1 });
      expect(result.report.snapshot).toMatchObject({ status: 'written', version: 1 });
      expect(result.messages!.slice(-2)).toEqual(step.slice(-2));
      const snapshot = store.snapshots[0]!;
      expect(snapshot.stepNumber).toBe(1);
      const trimmed = result.report.stages
        .flatMap((stage) => stage.removed)
        .filter((removal) => removal.reason === 'turn-trimmed')
        .map((removal) => removal.sequence as number);
      expect(trimmed.length).toBeGreaterThan(0);
      expect(snapshot.throughSequence).toBe(Math.max(...trimmed));
      expect(snapshot.includedSequences.every((sequence) => sequence > snapshot.throughSequence)).toBe(true);
      const rebuilt = rebuildContextFromSnapshot({ snapshot, summary: null, messages: store.messages, tokenCounter });
      expect(rebuilt.messages).toEqual(unref(result.messages!.slice(0, -2)));
      expect(rebuilt.matches).toBe(true);
      // The next request starts after the boundary and needs no new snapshot.
      const next = await engineFor(store, undefined, { profile: smallProfile(2000, 200) }).buildInitialContext();
      expect(next.report.snapshot.status).toBe('not-needed');
      expect(unref(next.messages)).toEqual(rebuilt.messages);
    });
  });

  describe('memory', () => {
    it('should quote relevant earlier messages found by search after the summary', async () => {
      const store = storeOf([
        user('u0', 'Our hotel is the Albergo Sole near the Pantheon.'),
        assistant('a0', text('Great choice.')),
        ...tripTurns(1, 10),
        question('How far is the Pantheon from our hotel?'),
      ]);
      const { messages, report } = await engineFor(store, recording().summarizer, {
        policy: { summary: { reserveTokens: 200 }, memory: { mode: 'search' } },
      }).buildInitialContext();
      expect(report.stages.find((stage) => stage.stage === 'memory')).toEqual({
        stage: 'memory',
        status: 'found',
        sequences: [1],
        removed: [],
        tokensSaved: 0,
      });
      expect(unref(messages[1])).toEqual({
        role: 'user',
        content: [
          {
            type: 'text',
            text: '[Earlier messages that may be relevant, found by search. They are quoted from outside the recent conversation.]\n\n[message 1, user] Our hotel is the Albergo Sole near the Pantheon.',
          },
        ],
      });
    });
  });

  describe('prepareStep', () => {
    it('should return undefined for a context it built, and for a step that still fits', async () => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      const engine = engineFor(store, recording().summarizer);
      const { messages } = await engine.buildInitialContext();
      expect((await engine.prepareStep({ messages, stepNumber: 0 })).messages).toBeUndefined();
      const step = [
        ...messages,
        {
          role: 'assistant' as const,
          content: [{ type: 'tool-call' as const, toolCallId: 'c-new', toolName: 'search', input: { day: 11 } }],
        },
        {
          role: 'tool' as const,
          content: [
            {
              type: 'tool-result' as const,
              toolCallId: 'c-new',
              toolName: 'search',
              output: { type: 'json' as const, value: { hits: ['harbour'] } },
            },
          ],
        },
      ];
      const result = await engine.prepareStep({ messages: step, stepNumber: 1, lastStepInputTokens: 100 });
      expect(result.messages).toBeUndefined();
      expect(result.report).toMatchObject({
        trigger: 'prepare-step',
        stepNumber: 1,
        changed: false,
        snapshot: { status: 'not-needed' },
      });
    });

    it('should preview a huge tool result of the current step, and accept its own output unchanged at the next step', async () => {
      const store = storeOf([...tripTurns(1, 2), question('Fetch all the museums')]);
      const engine = engineFor(store);
      const { messages } = await engine.buildInitialContext();
      const huge = JSON.stringify(
        Array.from({ length: 3000 }, (_item, index) => ({ museum: `museum ${index}`, open: index % 2 === 0 })),
      );
      const step = [
        ...messages,
        {
          role: 'assistant' as const,
          content: [{ type: 'tool-call' as const, toolCallId: 'c-all', toolName: 'museums', input: {} }],
        },
        {
          role: 'tool' as const,
          content: [
            {
              type: 'tool-result' as const,
              toolCallId: 'c-all',
              toolName: 'museums',
              output: { type: 'text' as const, value: huge },
            },
          ],
        },
      ];
      const first = await engine.prepareStep({ messages: step, stepNumber: 1 });
      expect(first.messages).toBeDefined();
      expect(first.report.budget.remainingTokens).toBeGreaterThanOrEqual(0);
      expect(first.messages!.at(-1)).toMatchObject({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c-all',
            output: { type: 'text', value: expect.stringMatching(/^\[agent-history: tool output shortened/) },
          },
        ],
      });
      expect(first.messages!.at(-2)).toBe(step.at(-2));
      const second = await engine.prepareStep({ messages: first.messages!, stepNumber: 2 });
      expect(second.messages).toBeUndefined();
    });

    it('should keep messages the store does not hold after the stored thread, and summarize none of them', async () => {
      const store = storeOf([question('unused')]);
      await store.writeSnapshot({
        expectedVersion: 0,
        throughSequence: 0,
        summaryId: null,
        includedSequences: [1],
        pruned: {},
        budget: {},
        policyVersion: 'v',
        messagesHash: 'h',
      });
      const { summarizer, calls } = recording();
      const engine = engineFor(store, summarizer);
      const callerMessages: ModelMessage[] = tripTurns(1, 10).map((message): ModelMessage =>
        message.role === 'user'
          ? { role: 'user', content: [{ type: 'text', text: String(message.parts[0]!.text) }] }
          : { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      );
      const result = await engine.prepareStep({
        messages: [...callerMessages, { role: 'user', content: 'last question' }],
        stepNumber: 0,
      });
      expect(result.messages!.at(-1)).toEqual({ role: 'user', content: 'last question' });
      expect(result.report.budget.remainingTokens).toBeGreaterThanOrEqual(0);
      expect(result.report.stages.find((stage) => stage.stage === 'summarize')).toMatchObject({
        status: 'failed',
        error: 'only stored messages can be summarized',
      });
      expect(calls).toEqual([]);
      expect(store.summaries).toEqual([]);
      // Without initialMessages() the engine loads the thread itself: a snapshot it writes names stored messages only.
      expect(
        store.snapshots.flatMap((snapshot) => snapshot.includedSequences).every((sequence) => sequence === 1),
      ).toBe(true);
    });

    it('should not compact again the very messages it returned, unless the instructions or the calibration changed', async () => {
      const store = storeOf([...tripTurns(1, 10), question('What about day 11?')]);
      const calibrator = createContextCalibrator();
      const engine = engineFor(store, undefined, { calibrator });
      const initial = await engine.buildInitialContext();
      const { messages } = initial;
      const repeated = await engine.prepareStep({ messages, stepNumber: 0 });
      expect(repeated.messages).toBeUndefined();
      expect(repeated.report).toMatchObject({
        trigger: 'prepare-step',
        stepNumber: 0,
        changed: false,
        stages: [],
        budget: initial.report.budget,
        estimatedTokens: initial.report.estimatedTokens,
        snapshot: { status: 'not-needed', version: initial.report.snapshot.version },
      });
      // Longer instructions leave less room than the context takes: the step is compacted again, and fits.
      const instructions = `You plan trips. ${words(initial.report.budget.remainingTokens + 20, 'rule')}`;
      const longer = await engine.prepareStep({ messages, stepNumber: 0, instructions });
      expect(longer.report.stages.map((stage) => stage.stage)).toContain('trim');
      expect(longer.messages!.length).toBeLessThan(messages.length);
      expect(longer.report.budget.remainingTokens).toBeGreaterThanOrEqual(0);
      // The messages it returned then are those it compacts no more, with those instructions.
      const again = await engine.prepareStep({ messages: longer.messages!, stepNumber: 1, instructions });
      expect(again.report.stages).toEqual([]);
      // A calibration learned elsewhere (a shared calibrator) changes the budget: compacted again.
      calibrator.observe({ estimatedTokens: 100, actualTokens: 200 });
      const recalibrated = await engine.prepareStep({ messages: longer.messages!, stepNumber: 1, instructions });
      expect(recalibrated.report.stages.length).toBeGreaterThan(0);
      expect(recalibrated.report.calibration.factor).toBeGreaterThan(1);
      expect(recalibrated.report.budget.remainingTokens).toBeGreaterThanOrEqual(0);
    });

    it('should calibrate from the previous step’s reported input tokens', async () => {
      const store = storeOf([...tripTurns(1, 1), question('Anything else?')]);
      const engine = engineFor(store);
      const { messages, report } = await engine.buildInitialContext();
      const result = await engine.prepareStep({
        messages,
        stepNumber: 1,
        lastStepInputTokens: report.estimatedTokens * 2,
      });
      expect(result.report.calibration).toEqual({
        factor: expect.closeTo(1.3, 10),
        observedInputTokens: report.estimatedTokens * 2,
        estimatedInputTokens: report.estimatedTokens,
      });
    });
  });
});
