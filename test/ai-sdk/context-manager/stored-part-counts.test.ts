import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../../src/ai-sdk/index.js';
import { loadO200kTokenCounter, type TokenCounter } from '../../../src/tokens/token-counter.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { createAgentHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';

// A thread loaded from the store is never tokenized again on the first call of a request, also
// where pruning removes parts of stored messages (their stored per-part counts are subtracted).

const counter = await loadO200kTokenCounter();

/** The store's counter (same id, so stored counts are used), recording every text it is asked to count. */
function spyCounter(): TokenCounter & { counted: string[] } {
  const counted: string[] = [];
  return { id: counter.id, counted, count: (text) => (counted.push(text), counter.count(text)) };
}

const filler = (words: number, seed: number) =>
  Array.from({ length: words }, (_word, index) => `w${(index * 7919 + seed * 104_729) % 997}`).join(' ');

/** A turn: a question, then an answer with reasoning, a small tool call and its result; every text marked `t<turn>-`. */
function turn(index: number): ContextUIMessage[] {
  return [
    { id: `u${index}`, role: 'user', parts: [{ type: 'text', text: `t${index}-question ${filler(30, index)}?` }] },
    {
      id: `a${index}`,
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: `t${index}-thought ${filler(60, index + 1)}` },
        {
          type: 'tool-search',
          toolCallId: `call-${index}`,
          state: 'output-available',
          input: { query: `t${index}-input ${filler(3, index)}` },
          output: { hits: [`t${index}-output ${filler(20, index + 2)}`] },
        },
        { type: 'step-start' },
        { type: 'text', text: `t${index}-answer ${filler(50, index + 3)}` },
      ],
    } as ContextUIMessage,
  ];
}

describe.each(BACKENDS)('the first call of a request on a thread loaded from the store on %s', (backend) => {
  const database = useTestDatabase(backend);

  /** `rows`: as written, or changed by SQL (an old release, a hand edit) before the call. */
  async function firstCall(rows: 'written' | 'old' | 'tampered' = 'written') {
    const store = createAgentHistory({ db: database.db, tokenCounter: counter }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    for (let index = 0; index < 30; index++)
      for (const message of turn(index)) await store.appendMessage(thread, message as never);
    await store.appendMessage(thread, { id: 'last', role: 'user', parts: [{ type: 'text', text: 'And next?' }] });
    // Rows with a count and no part counts (counted while streaming, or cleared for a rebuild).
    const edits = {
      written: null,
      old: 'part_token_counts = null',
      // Counts that do not sum to the count: a row one writer changed without the other column.
      tampered: 'part_token_counts[1] = part_token_counts[1] + 500',
    };
    if (edits[rows])
      await database.admin.query(`update agent_message set ${edits[rows]} where thread_id = $1`, [thread]);
    const spy = spyCounter();
    const manager = createContextManager({
      store: store.contextStore(thread),
      model: 'openai:gpt-4o',
      maxInputTokens: 6000,
      maxOutputTokens: 1000,
      tokenCounter: spy,
      // Old reasoning is pruned although the context fits: pruning must subtract stored part counts.
      policy: { prune: { reasoning: 'outside-newest-turns' } },
    });
    const messages = await manager.initialMessages({ instructions: 'You are an analyst.' });
    const removed = manager.lastReport!.stages.flatMap((stage) => stage.removed ?? []);
    return { spy, messages, removed, report: manager.lastReport! };
  }

  it('should tokenize no part of a stored message on initialMessages(), pruning by the stored part counts', async () => {
    const { spy, messages, removed } = await firstCall();
    // The thread did not fit: older turns lost their reasoning (parts of stored messages), some were dropped.
    expect(removed.some((entry) => entry.reason === 'reasoning-pruned')).toBe(true);
    expect(JSON.stringify(messages)).toContain('And next?');
    expect(spy.counted.filter((text) => /t\d+-/.test(text))).toEqual([]);
  });

  it('should still work on rows without part counts: the removed parts are counted, the result is the same', async () => {
    const stored = await firstCall();
    const old = await firstCall('old');
    expect(old.messages).toEqual(stored.messages);
    expect(old.report.estimatedTokens).toBe(stored.report.estimatedTokens);
    // Without part counts the engine tokenizes the parts it prunes, as it always did.
    expect(old.spy.counted.some((text) => /t\d+-thought/.test(text))).toBe(true);
  });

  it('should not trust part counts that do not sum to the stored count: the result is that of exact counts', async () => {
    const stored = await firstCall();
    const tampered = await firstCall('tampered');
    expect(tampered.messages).toEqual(stored.messages);
    expect(tampered.report.estimatedTokens).toBe(stored.report.estimatedTokens);
  });
});
