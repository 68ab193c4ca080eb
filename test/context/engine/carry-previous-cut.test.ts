// Starting a request from the previous one's cut (`policy.summary.startFrom: 'previous-cut'`, the default) may change
// where a request starts, and nothing else. Generated chats with tools (the prompt-cache bench's sessions: 0–4 tool
// steps per turn, results of 100–20,000 tokens, reasoning) are replayed request by request with a new engine per
// request, on budgets of 6k–40k, with and without a summarizer; between some requests the log changes under the
// snapshot (an older message excluded, an answer's parts rewritten, a redaction). Every call keeps every rule, every
// snapshot rebuilds exactly, and a request that carried a cut and compacted nothing more begins with exactly what the
// carried snapshot records (and writes none). A snapshot whose record names anything (another writer's, an older
// engine's: every call, every sequence, the newest turn's and pinned messages' too) changes neither the newest turn
// nor a pinned message.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { convertToModelMessages, type ModelMessage, type UIMessage } from 'ai';
import type { ContextReport, ContextSummarizerInput } from '../../../src/context/index.js';
import { createMemoryContextStore, type MemoryContextStore } from '../../../src/testing/index.js';
import { roundKey } from '../../../src/context/stages/shrink-newest-turn.js';
import { chatSession } from '../../../bench/prompt-cache/sessions.js';
import { tokensOf } from '../../../bench/prompt-cache/cache-tally.js';
import { createRandom } from '../../support/agent-conversations.js';
import { profile, toolPairProblems } from '../../support/check-generated-context.js';
import { tokenCounter } from '../fixtures.js';
import { appendCounted, BIG, capturingSummarizer, engineFor, rebuildOf } from '../../support/carried-cut-threads.js';

const RUNS = Math.max(6, Math.ceil(Number(process.env.PROPERTY_RUNS ?? 800) / 40));
const sent = (messages: readonly ModelMessage[]) =>
  messages.map(({ role, content, providerOptions }) => JSON.stringify({ role, content, providerOptions }));

const appendTo = (store: MemoryContextStore, message: UIMessage, pinned = false) =>
  appendCounted(store, message, tokenCounter, pinned);

/** The rules every call keeps, as problems (empty when it keeps them all). */
function problemsOf(messages: readonly ModelMessage[], budget: number, newest: string): string[] {
  const problems = toolPairProblems(messages);
  if (tokensOf(messages) > budget) problems.push(`over the budget: ${tokensOf(messages)} > ${budget}`);
  const lastUser = messages.findLast((message) => message.role === 'user');
  if (!JSON.stringify(lastUser?.content ?? '').includes(newest)) problems.push('the newest input is not the last');
  return problems;
}

const stageOf = (report: ContextReport, name: string) => report.stages.find((stage) => stage.stage === name);

// Whether a compaction changed nothing after the carry: no stage removed anything and no summary was written.
function compactedNothing(report: ContextReport): boolean {
  return report.stages.every(
    (stage) =>
      ['validate', 'filter', 'convert', 'carry'].includes(stage.stage) ||
      (stage.removed.length === 0 && !(stage.stage === 'summarize' && stage.status === 'created')),
  );
}

// A change of the log between requests: an older message excluded, an older answer's text rewritten, or redacted.
function changeLog(store: MemoryContextStore, random: ReturnType<typeof createRandom>) {
  const older = store.messages.slice(0, -1).filter((row) => row.contextState === 'eligible');
  const row = older[random.int(0, Math.max(0, older.length - 1))];
  if (!row || row.message.role !== 'assistant') return;
  const choice = random.int(0, 2);
  if (choice === 0) store.updateMessage(row.sequence, { contextState: 'excluded' });
  else if (choice === 1)
    store.updateMessage(row.sequence, {
      message: { ...row.message, parts: [{ type: 'text', text: `Rewritten ${row.sequence}.` }] },
      tokenCount: null,
      partTokenCounts: null,
    });
  else store.redactMessage(row.sequence);
}

describe('a request started from the previous cut', () => {
  it('should keep every rule, rebuild every snapshot, and begin with the carried snapshot when it compacts nothing', async () => {
    let carriedUnchanged = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(6_000, 16_000, 40_000),
        fc.boolean(),
        async (seed, budget, summarize) => {
          const random = createRandom(seed ^ 0xca77);
          const session = await chatSession(seed, random.int(8, 24));
          const store = createMemoryContextStore();
          for (const turn of session.turns) {
            appendTo(store, turn.user);
            const newest = (turn.user.parts[0] as { text: string }).text;
            const { engine, reports } = engineFor(store, { budget, summarize });
            const written = store.snapshots.length;
            let messages = (await engine.buildInitialContext()).messages;
            expect(problemsOf(messages, budget, newest)).toEqual([]);
            const first = reports[0]!;
            const carry = stageOf(first, 'carry');
            if (carry?.stage === 'carry' && carry.carried === 'previous-cut' && compactedNothing(first)) {
              const expected = rebuildOf(store, carry.snapshotVersion!);
              expect(sent(messages).slice(0, expected.messages.length)).toEqual(sent(expected.messages));
              expect(first.snapshot.status).toBe('not-needed');
              carriedUnchanged += 1;
            }
            for (const [index, step] of turn.steps.entries()) {
              const input = [...messages, ...step];
              messages = (await engine.prepareStep({ messages: input, stepNumber: index + 1 })).messages ?? input;
              expect(problemsOf(messages, budget, newest)).toEqual([]);
            }
            for (const snapshot of store.snapshots.slice(written))
              expect(rebuildOf(store, snapshot.version).matches).toBe(true);
            if (turn.answer) appendTo(store, turn.answer);
            if (random.chance(0.1)) changeLog(store, random);
          }
        },
      ),
      { numRuns: RUNS, seed: Number(process.env.PROPERTY_SEED ?? 0xca77) },
    );
    // The property's condition is met often: the carried prefix is checked, not skipped.
    expect(carriedUnchanged).toBeGreaterThan(RUNS);
  }, 600_000);

  it('should start from the whole thread with a snapshot of another policy version or budget, or when told to', async () => {
    const session = await chatSession(7, 12);
    // A thread whose newest snapshot carries a cut (each case on its own copy: every build may write one).
    const thread = async () => {
      const store = createMemoryContextStore();
      for (const turn of session.turns.slice(0, 11)) {
        appendTo(store, turn.user);
        await engineFor(store, { budget: 6_000 }).engine.buildInitialContext();
        appendTo(store, turn.answer!);
      }
      appendTo(store, session.turns[11]!.user);
      return store;
    };
    const carried = engineFor(await thread(), { budget: 6_000 });
    await carried.engine.buildInitialContext();
    expect(stageOf(carried.reports[0]!, 'carry')).toMatchObject({ carried: 'previous-cut' });
    const whole = await engineFor(await thread(), {
      budget: 6_000,
      policy: { summary: { startFrom: 'thread' } },
    }).engine.buildInitialContext();
    for (const [why, budget, policy] of [
      ['policy-changed', 6_000, { version: 'app/context-v2' }],
      ['budget-changed', 6_001, {}],
      ['off', 6_000, { summary: { startFrom: 'thread' } }],
    ] as const) {
      const other = engineFor(await thread(), { budget, policy });
      const built = await other.engine.buildInitialContext();
      expect(stageOf(other.reports[0]!, 'carry')).toMatchObject({ carried: why, removed: [], tokensSaved: 0 });
      if (budget === 6_000) expect(sent(built.messages)).toEqual(sent(whole.messages));
    }
  });

  it('should change neither the newest turn nor a pinned message, whatever a snapshot records', async () => {
    for (const seed of [3, 11, 29, 41]) {
      const session = await chatSession(seed, 10);
      const store = createMemoryContextStore();
      for (const [index, turn] of session.turns.slice(0, 9).entries()) {
        appendTo(store, turn.user, index === 2);
        appendTo(store, turn.answer!, index === 4);
      }
      // The newest turn in progress: its question and the answer's steps so far, stored.
      const newest = session.turns[9]!;
      appendTo(store, newest.user);
      appendTo(store, { ...newest.answer!, parts: newest.answer!.parts.slice(0, -2) }, false);
      const rows = store.messages;
      const calls = JSON.stringify(rows).match(/t\d+-c\d+/g) ?? [];
      const converted = await convertToModelMessages(rows.map((row) => row.message) as UIMessage[]);
      await store.writeSnapshot({
        expectedVersion: 0,
        throughSequence: 0,
        includedSequences: rows.map((row) => row.sequence),
        policyVersion: 'agent-history/context-v1',
        messagesHash: 'anything',
        budget: { contextWindow: profile.contextWindow, maxOutputTokens: profile.maxOutputTokens, maxInputTokens: BIG },
        pruned: {
          reasoningSequences: rows.map((row) => row.sequence),
          toolCallIds: [...new Set(calls)],
          previews: [...new Set(calls)].map((toolCallId) => ({ toolCallId, maxTokens: 16 })),
          trimmedReasoning: rows.map((row) => ({ sequence: row.sequence, exceptLast: false })),
          droppedRounds: rows.flatMap((row) =>
            converted
              .filter((message) => message.role === 'assistant')
              .map((message) => ({
                sequence: row.sequence,
                key: roundKey(message),
              })),
          ),
        },
      });
      const { engine, reports } = engineFor(store);
      const built = await engine.buildInitialContext();
      const plain = await engineFor(store, {
        policy: { summary: { startFrom: 'thread' } },
      }).engine.buildInitialContext();
      expect(stageOf(reports[0]!, 'carry')).toMatchObject({ carried: 'previous-cut' });
      expect(problemsOf(built.messages, BIG, (newest.user.parts[0] as { text: string }).text)).toEqual([]);
      // The newest turn (from its question on) and the pinned messages are as the thread's own build sends them.
      const from = (messages: readonly ModelMessage[]) =>
        sent(messages).slice(messages.findLastIndex((message) => message.role === 'user'));
      expect(from(built.messages)).toEqual(from(plain.messages));
      for (const pinned of rows.filter((row) => row.pinned))
        for (const part of pinned.message.parts)
          if (part.type === 'text') expect(JSON.stringify(built.messages)).toContain(JSON.stringify(part.text));
      // And the turns before it are carried: the record's reasoning, tool traffic and previews are applied there.
      expect(tokensOf(built.messages)).toBeLessThan(tokensOf(plain.messages));
    }
  });
  it('should hand the summarizer the turns as they were stored, not as the carried cut left them', async () => {
    let checked = 0;
    for (const seed of [5, 17, 23, 31]) {
      const session = await chatSession(seed, 30);
      const store = createMemoryContextStore();
      for (const turn of session.turns) {
        appendTo(store, turn.user);
        const inputs: ContextSummarizerInput[] = [];
        const { engine, reports } = engineFor(store, { budget: 16_000, summarizer: capturingSummarizer(inputs) });
        await engine.buildInitialContext();
        const carry = stageOf(reports[0]!, 'carry');
        if (carry?.stage === 'carry' && carry.removed.length > 0)
          for (const input of inputs) {
            // The turns folded in this round (each starts with "Question <turn>:"), and every tool result of theirs.
            const turns = new Set(
              JSON.stringify(input.messages)
                .match(/Question \d+:/g)
                ?.map((q) => q.slice(9, -1)),
            );
            const stored = new Set(
              store.messages.flatMap((row) => JSON.stringify(row.message).match(/t\d+-c\d+/g) ?? []),
            );
            const expected = [...stored].filter((id) => turns.has(id.slice(1, id.indexOf('-'))));
            const results = input.messages.flatMap((message) =>
              typeof message.content === 'string'
                ? []
                : message.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])),
            );
            expect(turns.size).toBeGreaterThan(0);
            expect(new Set(results)).toEqual(new Set(expected));
            checked += 1;
          }
        appendTo(store, turn.answer!);
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});
