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

  it('should use the caller’s messages as they are when nothing is stored', async () => {
    const engine = createContextEngine({ store: createMemoryContextStore(), profile: smallProfile(), tokenCounter });
    const messages = [userText('hello')];
    expect((await engine.prepareStep({ messages, stepNumber: 0 })).messages).toBeUndefined();
  });
});
