// Attacks on the carried cut (`policy.summary.startFrom: 'previous-cut'`): snapshots whose `pruned` record another
// writer (or a corrupted row) made, read on the hot path of every request.
import { describe, expect, it } from 'vitest';
import { convertToModelMessages, type ModelMessage, type UIMessage } from 'ai';
import type { ContextPolicyInput, ContextSummarizerInput } from '../../../src/context/index.js';
import { roundKey } from '../../../src/context/stages/shrink-newest-turn.js';
import type { TokenCounter } from '../../../src/tokens/token-counter.js';
import { createMemoryContextStore, type MemoryContextStore } from '../../../src/testing/index.js';
import { chatSession } from '../../../bench/prompt-cache/sessions.js';
import { profile, toolPairProblems } from '../../support/check-generated-context.js';
import { tokenCounter } from '../fixtures.js';
import {
  appendCounted,
  BIG,
  capturingSummarizer,
  engineFor,
  handWrittenThread,
  rebuildsFrom,
} from '../../support/carried-cut-threads.js';
import { contentPartKey } from '../../../src/context/stages/preview-message-content.js';

/** The fixture's counter, which throws once it has counted `limit` texts (a loop that never ends fails instead). */
function boundedCounter(limit: number): TokenCounter {
  let calls = 0;
  return {
    id: tokenCounter.id,
    count: (text) => {
      if (++calls > limit) throw new Error(`counted more than ${limit} texts: a runaway loop`);
      return tokenCounter.count(text);
    },
  };
}

async function threadWithTools(seed: number, turns: number): Promise<MemoryContextStore> {
  const session = await chatSession(seed, turns);
  const store = createMemoryContextStore();
  for (const turn of session.turns.slice(0, -1)) {
    appendCounted(store, turn.user as UIMessage, tokenCounter);
    appendCounted(store, turn.answer! as UIMessage, tokenCounter);
  }
  appendCounted(store, session.turns.at(-1)!.user as UIMessage, tokenCounter);
  return store;
}

const lastText = (store: MemoryContextStore) =>
  (store.messages.at(-1)!.message.parts[0] as unknown as { text: string }).text;

const oldCallIds = (store: MemoryContextStore) =>
  store.messages.slice(0, -1).flatMap((row) => JSON.stringify(row.message).match(/t\d+-c\d+/g) ?? []);

async function writeRecord(store: MemoryContextStore, pruned: unknown, maxInputTokens = BIG) {
  await store.writeSnapshot({
    expectedVersion: 0,
    throughSequence: 0,
    includedSequences: store.messages.map((row) => row.sequence),
    policyVersion: 'agent-history/context-v1',
    messagesHash: 'anything',
    budget: { contextWindow: profile.contextWindow, maxOutputTokens: profile.maxOutputTokens, maxInputTokens },
    pruned,
  });
}

describe('a carried cut from a hostile snapshot record', () => {
  it.each([['output'], ['input'], ['content']] as const)(
    'should not loop forever on a %s preview of a negative size',
    async (part) => {
      const store = await threadWithTools(3, 6);
      // The older messages' call ids, or the content keys of their texts (a content preview names one instead).
      const keys =
        part === 'content'
          ? store.messages
              .slice(0, -1)
              .flatMap((row) =>
                row.message.parts.flatMap((item) =>
                  item.type === 'text'
                    ? [contentPartKey(row.sequence, { type: 'text', text: String(item.text) })!]
                    : [],
                ),
              )
          : [...new Set(oldCallIds(store))];
      expect(keys.length).toBeGreaterThan(0);
      await writeRecord(store, {
        previews: keys.map((toolCallId) => ({ toolCallId, maxTokens: -1, ...(part === 'output' ? {} : { part }) })),
      });
      const { engine, reports } = engineFor(store, { tokenCounter: boundedCounter(200_000) });
      const built = await engine.buildInitialContext();
      expect(reports[0]!.stages.find((stage) => stage.stage === 'carry')).toMatchObject({ carried: 'previous-cut' });
      expect(toolPairProblems(built.messages)).toEqual([]);
      expect(JSON.stringify(built.messages.at(-1))).toContain(lastText(store));
      // The record was applied: the previews are in the context.
      expect(JSON.stringify(built.messages)).toContain('shortened to fit the context window');
    },
    120_000,
  );

  it("should not apply its record's emptyMessages where the policy keeps empty messages", async () => {
    // An older answer opens with a steering message the user left empty: an empty user message, which a policy
    // with `emptyMessages: 'keep'` sends. A record without `emptyMessages` (another writer's, an older engine's, or
    // one of a policy that removed them under the same version) reads as 'remove'.
    const session = await chatSession(3, 14);
    const store = createMemoryContextStore();
    for (const [index, turn] of session.turns.slice(0, -1).entries()) {
      appendCounted(store, turn.user as UIMessage, tokenCounter);
      const answer = turn.answer!;
      const parts = index === 2 ? [{ type: 'steering-message', parts: [] }, ...answer.parts] : answer.parts;
      appendCounted(store, { ...answer, parts } as UIMessage, tokenCounter);
    }
    appendCounted(store, session.turns.at(-1)!.user as UIMessage, tokenCounter);
    const budget = 6_000;
    await writeRecord(store, {}, budget);
    const policy: ContextPolicyInput = { prune: { emptyMessages: 'keep' } };
    const { engine, reports } = engineFor(store, { budget, policy });
    await engine.buildInitialContext();
    expect(reports[0]!.snapshot.status).toBe('written');
    // Every snapshot the engine wrote rebuilds exactly.
    expect(rebuildsFrom(store, 1)).not.toContain(false);
  });

  it('should rebuild the snapshot it writes after a dropped round whose call id is in another message too', async () => {
    // Call ids are the provider's: some reuse them. `X` is called in the first answer and, beside `Z`, in one step
    // of the second; the record drops that step's round. Over the budget the prune stage then drops the old
    // traffic of `X`: a rebuild prunes `X` before it drops rounds, and the round's key no longer matches.
    const store = createMemoryContextStore();
    const { search, ask, answer } = handWrittenThread(store);
    ask('u1', 'Question one?');
    answer('a1', [search('X', 300)], [{ type: 'text', text: 'Answer one.' }]);
    ask('u2', 'Question two?');
    answer('a2', [search('X', 5), search('Z', 5)], [{ type: 'text', text: 'Answer two.' }]);
    for (let turn = 3; turn < 7; turn++) {
      ask(`u${turn}`, `Question ${turn}?`);
      answer(`a${turn}`, [{ type: 'text', text: `Answer ${turn}.` }]);
    }
    ask('u7', 'The newest question?');
    const budget = 3_000;
    await writeRecord(store, { droppedRounds: [{ sequence: 4, key: 'tools:X,Z' }] }, budget);
    const { engine, reports } = engineFor(store, { budget });
    const built = await engine.buildInitialContext();
    expect(reports[0]!.snapshot.status).toBe('written');
    expect(toolPairProblems(built.messages)).toEqual([]);
    expect(rebuildsFrom(store, 1)).not.toContain(false);
  });

  it('should record the cut the whole thread carried when the window does not hold', async () => {
    // Without a summarizer the thread is loaded from a window of its newest turns. Here the record's pruning of `W`
    // leaves the window under the budget, so the window does not hold and the whole thread is compacted. The window
    // holds one use of the reused id `X`, the whole thread two: only the window's carry drops the round.
    const store = createMemoryContextStore();
    const { rows, search, ask, answer } = handWrittenThread(store);
    ask('u1', 'Question one?');
    answer('a1', [search('X', 100)], [{ type: 'text', text: 'Answer one.' }]);
    for (let turn = 2; turn < 10; turn++) {
      ask(`u${turn}`, `Question ${turn}? ${rows(5)}`);
      answer(`a${turn}`, [{ type: 'text', text: `Answer ${turn}. ${rows(5)}` }]);
    }
    ask('uR', 'Question R?');
    answer('aR', [search('X', 5), search('Z', 5)], [{ type: 'text', text: 'Answer R.' }]);
    const round = store.messages.length;
    ask('uW', 'Question W?');
    answer('aW', [search('W', 400)], [{ type: 'text', text: 'Answer W.' }]);
    for (let turn = 0; turn < 3; turn++) {
      ask(`v${turn}`, `Later ${turn}? ${rows(5)}`);
      answer(`b${turn}`, [{ type: 'text', text: `Later answer ${turn}.` }]);
    }
    ask('last', 'The newest question?');
    const budget = 2_500;
    await writeRecord(store, { toolCallIds: ['W'], droppedRounds: [{ sequence: round, key: 'tools:X,Z' }] }, budget);
    const policy: ContextPolicyInput = { prune: { toolTraffic: 'none' } };
    const { engine, reports } = engineFor(store, { budget, policy });
    const built = await engine.buildInitialContext();
    expect(reports[0]!.snapshot.status).toBe('written');
    expect(toolPairProblems(built.messages)).toEqual([]);
    expect(rebuildsFrom(store, 1, policy)).not.toContain(false);
  });

  it('should hand the summarizer the answers a record drops whole', async () => {
    // The record drops every round of the older answers (another writer's, or one of an app that stores each step
    // as a message, whose trims dropped all of one): they leave the carried context whole, and the turns the
    // summarizer folds must still bring their tool results.
    const session = await chatSession(5, 20);
    const store = createMemoryContextStore();
    for (const turn of session.turns.slice(0, -1)) {
      appendCounted(store, turn.user as UIMessage, tokenCounter);
      appendCounted(store, turn.answer! as UIMessage, tokenCounter);
    }
    appendCounted(store, session.turns.at(-1)!.user as UIMessage, tokenCounter);
    const droppedRounds: Array<{ sequence: number; key: string }> = [];
    for (const row of store.messages.slice(0, -20))
      if (row.message.role === 'assistant')
        for (const message of await convertToModelMessages([row.message as UIMessage]))
          if (message.role === 'assistant') droppedRounds.push({ sequence: row.sequence, key: roundKey(message) });
    const budget = 6_000;
    await writeRecord(store, { droppedRounds }, budget);
    const inputs: ContextSummarizerInput[] = [];
    const { engine, reports } = engineFor(store, { budget, summarizer: capturingSummarizer(inputs) });
    await engine.buildInitialContext();
    expect(reports[0]!.stages.find((stage) => stage.stage === 'carry')).toMatchObject({ carried: 'previous-cut' });
    expect(inputs.length).toBeGreaterThan(0);
    const stored = new Set(store.messages.flatMap((row) => JSON.stringify(row.message).match(/t\d+-c\d+/g) ?? []));
    for (const input of inputs) {
      // The turns folded (each starts with "Question <turn>:"), and every tool result of theirs.
      const turns = new Set(
        JSON.stringify(input.messages)
          .match(/Question \d+:/g)
          ?.map((question) => question.slice(9, -1)),
      );
      const results = input.messages.flatMap((message) =>
        typeof message.content === 'string'
          ? []
          : message.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])),
      );
      expect(new Set(results)).toEqual(new Set([...stored].filter((id) => turns.has(id.slice(1, id.indexOf('-'))))));
    }
  });

  it('should change no pending approval, newest turn or pinned message, from initialMessages or a first step', async () => {
    // Older turns with an answered approval and one left pending, a pinned question and answer, and a newest turn
    // whose stored answer awaits an approval; the record names everything, with previews of size 0 (larger than
    // the short outputs they stand for).
    const sent = (messages: readonly ModelMessage[]) =>
      messages.map(({ role, content }) => JSON.stringify({ role, content }));
    const newestTurn = (messages: readonly ModelMessage[]) =>
      sent(messages).slice(messages.findLastIndex((message) => message.role === 'user'));
    const deploy = (toolCallId: string, extra: object) => ({
      type: 'tool-deploy',
      toolCallId,
      input: { q: toolCallId },
      ...extra,
    });
    const session = await chatSession(11, 10);
    const thread = async (budget: number) => {
      const store = createMemoryContextStore();
      for (const [index, turn] of session.turns.slice(0, 9).entries()) {
        appendCounted(store, turn.user as UIMessage, tokenCounter, index === 1);
        const parts: unknown[] = [...turn.answer!.parts];
        if (index === 3)
          parts.unshift(
            { type: 'step-start' },
            deploy('ap-old', {
              state: 'output-available',
              output: 'deployed',
              approval: { id: 'apr-old', approved: true },
            }),
          );
        if (index === 5)
          parts.push(
            { type: 'step-start' },
            deploy('ap-left', { state: 'approval-requested', approval: { id: 'apr-left' } }),
          );
        appendCounted(store, { ...turn.answer!, parts } as UIMessage, tokenCounter, index === 4);
      }
      const newest = session.turns[9]!;
      appendCounted(store, newest.user as UIMessage, tokenCounter);
      const pending = deploy('ap-new', { state: 'approval-requested', approval: { id: 'apr-new' } });
      const inProgress = [...newest.answer!.parts.slice(0, -2), { type: 'step-start' }, pending];
      appendCounted(store, { id: 'an', role: 'assistant', parts: inProgress } as UIMessage, tokenCounter);
      const rows = store.messages;
      const calls = [...new Set(JSON.stringify(rows).match(/t\d+-c\d+|ap-[a-z]+/g) ?? [])];
      const droppedRounds: Array<{ sequence: number; key: string }> = [];
      for (const row of rows)
        for (const message of await convertToModelMessages([row.message as UIMessage]))
          if (message.role === 'assistant') droppedRounds.push({ sequence: row.sequence, key: roundKey(message) });
      await writeRecord(
        store,
        {
          reasoningSequences: rows.map((row) => row.sequence),
          toolCallIds: calls,
          previews: calls.flatMap((toolCallId) => [
            { toolCallId, maxTokens: 0 },
            { toolCallId, maxTokens: 0, part: 'input' },
          ]),
          trimmedReasoning: rows.map((row) => ({ sequence: row.sequence, exceptLast: false })),
          droppedRounds,
        },
        budget,
      );
      return store;
    };
    const newestText = (session.turns[9]!.user.parts[0] as unknown as { text: string }).text;
    for (const budget of [BIG, 5_000]) {
      const built: Record<string, ModelMessage[]> = {};
      for (const startFrom of ['previous-cut', 'thread'] as const)
        for (const path of ['initial', 'step'] as const) {
          const store = await thread(budget);
          const { engine, reports } = engineFor(store, { budget, policy: { summary: { startFrom } } });
          const given = await convertToModelMessages(store.messages.map((row) => row.message as UIMessage));
          const messages =
            path === 'initial'
              ? (await engine.buildInitialContext()).messages
              : ((await engine.prepareStep({ messages: given, stepNumber: 0 })).messages ?? given);
          if (startFrom === 'previous-cut')
            expect(reports[0]!.stages.find((stage) => stage.stage === 'carry')).toMatchObject({
              carried: 'previous-cut',
            });
          built[`${startFrom} ${path}`] = messages;
          expect(toolPairProblems(messages)).toEqual([]);
          expect(JSON.stringify(messages.findLast((message) => message.role === 'user'))).toContain(newestText);
          for (const row of store.messages.filter((candidate) => candidate.pinned))
            for (const part of row.message.parts)
              if (part.type === 'text') expect(JSON.stringify(messages)).toContain(JSON.stringify(part.text));
          expect(rebuildsFrom(store, 1)).not.toContain(false);
        }
      if (budget === BIG)
        for (const path of ['initial', 'step'])
          expect(newestTurn(built[`previous-cut ${path}`]!)).toEqual(newestTurn(built[`thread ${path}`]!));
    }
  });
});
