import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createContextEngine } from '../../../src/context/index.js';
import { createMemoryContextStore } from '../../../src/testing/index.js';
import { assistant, smallProfile, storeOf, text, tokenCounter, unref, user } from '../fixtures.js';

const userText = (value: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text: value }] });
const answer = (value: string): ModelMessage => ({ role: 'assistant', content: [{ type: 'text', text: value }] });

describe('prepareStep without initialMessages()', () => {
  it('should keep an input the app did not store after the stored thread, even when an older message reads the same', async () => {
    const store = storeOf([user('u1', 'OK.'), assistant('a1', text('Fine.')), user('u2', 'pinned rule')], (index) => ({
      pinned: index === 2,
    }));
    const engine = createContextEngine({ store, profile: smallProfile(), tokenCounter });
    // The caller's own copy of the thread (the pinned rule left out), then a new "OK." the store does not hold.
    const result = await engine.prepareStep({
      messages: [userText('OK.'), answer('Fine.'), userText('OK.')],
      stepNumber: 0,
    });
    expect(unref(result.messages)).toEqual([
      userText('OK.'),
      answer('Fine.'),
      userText('pinned rule'),
      userText('OK.'),
    ]);
  });

  it('should send the thread as initialMessages() builds it when a message the store closed reads like a later one', async () => {
    // The store closes the superseded approval of a1 (a call and an error result); the caller's conversion left the
    // call out, so its a1 reads like a2. Paired with a2, it once made the caller's u2 and a2 look unstored: the
    // newest input went out twice.
    const thread = [
      user('u1', 'Deploy it.'),
      assistant(
        'a1',
        { type: 'tool-deploy', toolCallId: 'c1', state: 'approval-requested', input: {}, approval: { id: 'p1' } },
        text('OK.'),
      ),
      user('u2', 'Status?'),
      assistant('a2', text('OK.')),
    ];
    const initial = await createContextEngine({
      store: storeOf(thread),
      profile: smallProfile(),
      tokenCounter,
    }).buildInitialContext();
    const engine = createContextEngine({ store: storeOf(thread), profile: smallProfile(), tokenCounter });
    const alone = await engine.prepareStep({
      messages: [userText('Deploy it.'), answer('OK.'), userText('Status?'), answer('OK.')],
      stepNumber: 0,
    });
    expect(unref(alone.messages)).toEqual(unref(initial.messages));
    expect(unref(alone.messages)?.filter((message) => message.role === 'user')).toEqual([
      userText('Deploy it.'),
      userText('Status?'),
    ]);
  });

  it('should use the caller’s messages as they are when nothing is stored', async () => {
    const engine = createContextEngine({ store: createMemoryContextStore(), profile: smallProfile(), tokenCounter });
    const messages = [userText('hello')];
    expect((await engine.prepareStep({ messages, stepNumber: 0 })).messages).toBeUndefined();
  });
});

describe('snapshot boundaries across steps', () => {
  it('should write snapshots whose boundaries only advance over the steps of a summarized thread, on copies', async () => {
    const { createOfflineSummarizer } = await import('../../../src/ai-sdk/summarizers/offline-summarizer.js');
    const thread = Array.from({ length: 30 }, (_unused, index) => [
      user(`u${index}`, `Question ${index}: ${'plan the trip '.repeat(20)}`),
      assistant(`a${index}`, text(`Answer ${index}: ${'visit the museum '.repeat(25)}`)),
    ]).flat();
    const store = storeOf([...thread, user('last', 'And tomorrow?')]);
    const engine = createContextEngine({
      store,
      profile: smallProfile(2600, 200),
      tokenCounter,
      summarizer: createOfflineSummarizer({ itemsPerSection: 2, itemCharacters: 30 }),
      policy: { summary: { reserveTokens: 200 }, toolOutputPreview: { tokens: 900, minimumTokens: 64 } },
    });
    let { messages } = await engine.buildInitialContext();
    expect(store.snapshots.length).toBeGreaterThan(0);
    for (let step = 1; step <= 4; step++) {
      const toolCallId = `call-${step}`;
      messages = [
        ...messages,
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId, toolName: 'search', input: { step } }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId,
              toolName: 'search',
              output: { type: 'text', value: `result ${step} `.repeat(150) },
            },
          ],
        },
      ];
      const result = await engine.prepareStep({ messages: structuredClone(messages), stepNumber: step });
      messages = result.messages ?? messages;
    }
    const boundaries = store.snapshots.map((snapshot) => snapshot.throughSequence);
    expect(boundaries).toEqual([...boundaries].sort((a, b) => a - b));
  });
});
