// Attacks on the Postgres store's context cache (`createAgentHistory({ contextCache })`): a request served with the
// cache must send the model what the same request sends without it, whatever the caller did with an earlier
// request's messages; a redacted message's old text must not stay in the process's cache.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { createContextManager } from '../../src/ai-sdk/index.js';
import { createAgentHistory, createContextMessageCache } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { smallProfile, tokenCounter } from '../context/fixtures.js';
import { cachedVersion } from '../../src/context/caches/cached-row.js';
import type { ContextStore } from '../../src/model/context-store.js';
import { createContextEngine, type ContextPolicyInput, type ContextSummarizer } from '../../src/context/index.js';

const json = (messages: readonly ModelMessage[]) => JSON.stringify(messages);
type TenantStore = ReturnType<ReturnType<typeof createAgentHistory>['forTenant']>;

const chat = [
  { id: 'u1', role: 'user' as const, parts: [{ type: 'text', text: 'Hello' }] },
  { id: 'a1', role: 'assistant' as const, parts: [{ type: 'text', text: 'Hi, how can I help?' }] },
  { id: 'u2', role: 'user' as const, parts: [{ type: 'text', text: 'Tell me a joke' }] },
];

describe.each(BACKENDS)('attacks on the context cache on %s', (backend) => {
  const database = useTestDatabase(backend);

  function managerOf(store: TenantStore | ContextStore, thread: string, policy?: ContextPolicyInput) {
    const context = 'contextStore' in store ? store.contextStore(thread) : store;
    return createContextManager({ store: context, model: 'openai:gpt-4o', tokenCounter, policy });
  }

  /** A cached and an uncached store of one tenant, and a thread holding `messages` (a short chat by default). */
  async function twoStores(messages: Parameters<TenantStore['appendMessage']>[1][] = chat) {
    const tenant = randomUUID();
    const cached = createAgentHistory({ db: database.db, contextCache: createContextMessageCache() }).forTenant(tenant);
    const uncached = createAgentHistory({ db: database.db, contextCache: false }).forTenant(tenant);
    const thread = await cached.createThread();
    for (const message of messages) await cached.appendMessage(thread.id, message);
    return { cached, uncached, thread: thread.id };
  }

  it("should not send the next request what a caller set on this request's messages (top level)", async () => {
    const { cached, uncached, thread } = await twoStores();
    const first = await managerOf(cached, thread).initialMessages();
    // The usual provider cache breakpoint: the app marks the last message of the prompt it sends, in place.
    const last = first.at(-1) as ModelMessage & { providerOptions?: unknown };
    last.providerOptions = { anthropic: { cacheControl: { type: 'ephemeral' } } };

    const again = await managerOf(cached, thread).initialMessages();
    const fresh = await managerOf(uncached, thread).initialMessages();
    expect(JSON.stringify(again)).toBe(JSON.stringify(fresh));
  });

  it('should send what a store without the cache sends, after each of a sequence of store operations', async () => {
    const tenant = randomUUID();
    const cache = createContextMessageCache();
    const cached = createAgentHistory({ db: database.db, contextCache: cache }).forTenant(tenant);
    const uncached = createAgentHistory({ db: database.db, contextCache: false }).forTenant(tenant);
    const thread = (await cached.createThread()).id;
    let fork: string | undefined;
    const check = async (step: string) => {
      for (const id of fork ? [thread, fork] : [thread]) {
        const seen = json(await managerOf(cached, id).initialMessages());
        expect(`${step}: ${seen}`).toBe(`${step}: ${json(await managerOf(uncached, id).initialMessages())}`);
      }
    };
    const say = (id: string, words: string) =>
      cached.appendMessage(thread, { id, role: 'user', parts: [{ type: 'text', text: words }] });
    await say('u1', 'My card is 4111 and my name is Ada');
    await check('append');
    await cached.beginAssistantMessage(thread, { messageId: 'a1' });
    await check('begin');
    await cached.checkpointMessage(thread, 'a1', { parts: [{ type: 'text', text: 'Let me' }] });
    await check('checkpoint');
    await cached.finalizeMessage(thread, 'a1', {
      status: 'completed',
      parts: [{ type: 'text', text: 'Let me look: Ada, 4111.' }],
    });
    await check('finalize');
    await say('u2', 'Thanks');
    await cached.excludeMessages(thread, ['u2'], { reason: 'test' });
    await check('exclude');
    await cached.includeMessages(thread, ['u2']);
    await check('include');
    await cached.pinMessage(thread, 'u1');
    await check('pin');
    fork = (await cached.forkThread(thread, { atSequence: 3 })).id;
    await check('fork');
    await cached.redactMessage(thread, 'a1', { spans: ['4111'], actor: 'test', reason: 'PCI' });
    await check('redact spans');
    expect(json(await managerOf(cached, fork).initialMessages())).not.toContain('Ada, 4111');
    await cached.unpinMessage(thread, 'u1');
    await cached.rebuildDerivedData({ tokenCounts: true });
    await check('unpin and rebuild');
    await cached.deleteThread(fork);
    fork = undefined;
  });

  it("should refuse a change to a returned message's part loudly, take one made by replacing the part, and keep neither", async () => {
    const { cached, uncached, thread } = await twoStores();
    const cacheControl = { anthropic: { cacheControl: { type: 'ephemeral' } } };
    // A part of a cached message is frozen: set in place, the change throws (it would reach every later request).
    const returned = await managerOf(cached, thread).initialMessages();
    const content = returned.at(-1)!.content as Array<{ providerOptions?: unknown }>;
    expect(() => {
      content[0]!.providerOptions = cacheControl;
    }).toThrow(TypeError);
    // The documented way: a copy of the part in the message's own content array.
    content[0] = { ...content[0]!, providerOptions: cacheControl };
    expect(JSON.stringify(returned.at(-1))).toContain('ephemeral');
    const next = json(await managerOf(cached, thread).initialMessages());
    expect(next).not.toContain('ephemeral');
    expect(next).toBe(json(await managerOf(uncached, thread).initialMessages()));
  });

  it('should not keep a redacted text that a request in flight read before the redaction', async () => {
    const cache = createContextMessageCache();
    const store = createAgentHistory({ db: database.db, contextCache: cache }).forTenant(randomUUID());
    const thread = (await store.createThread()).id;
    await store.appendMessage(thread, { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'card 4111 1111' }] });
    const [before] = (await store.loadContext(thread)).tail;
    const inner = store.contextStore(thread);
    // The request reads the thread, then the redaction commits, then the request converts what it read.
    const racing: ContextStore = {
      ...inner,
      async loadContext() {
        const view = await inner.loadContext();
        await store.redactMessage(thread, 'm1', { spans: ['4111'], actor: 'test', reason: 'PCI' });
        return view;
      },
    };
    expect(json(await managerOf(racing, thread).initialMessages())).toContain('4111');
    expect(inner.messageCache!.get(before!.rowId!, cachedVersion(before!)!)).toBeUndefined();
  });

  it('should send what the database holds after raw SQL changes of parts, status and message id', async () => {
    const { cached, uncached, thread } = await twoStores();
    await managerOf(cached, thread).initialMessages();
    await database.admin.query(
      `update agent_message set parts = '[{"type":"text","text":"Changed behind the store"}]'::json
       where tenant_id = $1 and thread_id = $2 and message_id = 'a1'`,
      [cached.tenantId, thread],
    );
    await database.admin.query(
      `update agent_message set message_id = 'u2b' where tenant_id = $1 and thread_id = $2 and message_id = 'u2'`,
      [cached.tenantId, thread],
    );
    const again = json(await managerOf(cached, thread).initialMessages());
    expect(again).toContain('Changed behind the store');
    expect(again).toBe(json(await managerOf(uncached, thread).initialMessages()));
  });

  it('should send a recreated thread as it is now, after deleteThread and the same ids again', async () => {
    const { cached, uncached, thread } = await twoStores();
    await managerOf(cached, thread).initialMessages();
    await cached.deleteThread(thread);
    await cached.createThread({ id: thread });
    await cached.appendMessage(thread, { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Second life' }] });
    const again = json(await managerOf(cached, thread).initialMessages());
    expect(again).toContain('Second life');
    expect(again).toBe(json(await managerOf(uncached, thread).initialMessages()));
  });

  it('should serve two interleaved requests of one thread as without the cache', async () => {
    const { cached, uncached, thread } = await twoStores();
    const [a, b] = await Promise.all([
      managerOf(cached, thread).initialMessages(),
      managerOf(cached, thread).initialMessages(),
    ]);
    const fresh = json(await managerOf(uncached, thread).initialMessages());
    expect([json(a), json(b)]).toEqual([fresh, fresh]);
  });

  it('should serve a row larger than maxBytes uncached, and the others as before', async () => {
    const tenant = randomUUID();
    const cache = createContextMessageCache({ maxBytes: 200 });
    const cached = createAgentHistory({ db: database.db, contextCache: cache }).forTenant(tenant);
    const uncached = createAgentHistory({ db: database.db, contextCache: false }).forTenant(tenant);
    const thread = (await cached.createThread()).id;
    await cached.appendMessage(thread, { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(5000) }] });
    await cached.appendMessage(thread, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'small' }] });
    const first = json(await managerOf(cached, thread).initialMessages());
    expect(cache.bytes).toBeLessThanOrEqual(200);
    expect(first).toBe(json(await managerOf(uncached, thread).initialMessages()));
    expect(json(await managerOf(cached, thread).initialMessages())).toBe(first);
  });

  it("should not send the next request what a caller changed inside a returned tool result's value", async () => {
    const { cached, uncached, thread } = await twoStores([
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Find hotels' }] },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          {
            type: 'tool-search',
            toolCallId: 'call-1',
            state: 'output-available',
            input: { city: 'Oslo' },
            output: { hits: ['Hotel A'] },
          },
          { type: 'text', text: 'Found one.' },
        ],
      },
      { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Book it' }] },
    ]);
    const first = await managerOf(cached, thread).initialMessages();
    const tool = first.find((message) => message.role === 'tool')!;
    const result = (tool.content as Array<{ type: string; output?: { value?: { hits?: string[] } } }>)[0]!;
    // An app that scrubs what it sends, in place (as middleware often does).
    try {
      result.output!.value!.hits!.push('INJECTED');
    } catch {
      // A frozen value refuses it (loudly, unlike without the cache: see the test on a part above).
    }
    const again = json(await managerOf(cached, thread).initialMessages());
    expect(again).not.toContain('INJECTED');
    expect(again).toBe(json(await managerOf(uncached, thread).initialMessages()));
  });

  it("should not send the next request a part a caller added to a pruned message's content", async () => {
    const { cached, uncached, thread } = await twoStores([
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Why?' }] },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'Let me think.' },
          { type: 'text', text: 'Because.' },
        ],
      },
      { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'And then?' }] },
    ]);
    // The answer of an older turn loses its reasoning (pruned at every turn, although the context fits): the engine
    // returns a pruned copy of the cached message.
    const pruning: ContextPolicyInput = { prune: { reasoning: 'outside-newest-turns' } };
    const first = await managerOf(cached, thread, pruning).initialMessages();
    const answer = first.find((message) => message.role === 'assistant')!;
    expect(json([answer])).not.toContain('Let me think');
    try {
      (answer.content as unknown[]).push({ type: 'text', text: 'INJECTED' });
    } catch {
      // A frozen content refuses it: then nothing can reach the next request either.
    }
    const again = json(await managerOf(cached, thread, pruning).initialMessages());
    expect(again).not.toContain('INJECTED');
    expect(again).toBe(json(await managerOf(uncached, thread, pruning).initialMessages()));
  });
});

describe.each(BACKENDS)('a summarizer that changes its messages, with the context cache on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should summarize as without the cache when the summarizer edits the messages it is given', async () => {
    const tenant = randomUUID();
    // An app's summarizer that shortens the texts it is handed, in place, before sending them on.
    const summarizer: ContextSummarizer = {
      id: 'shortening',
      summarize: async ({ messages }) => {
        for (const message of messages)
          if (typeof message.content !== 'string')
            for (const part of message.content as Array<{ type: string; text?: string }>)
              if (part.type === 'text') part.text = part.text!.slice(0, 40);
        return `Summary of ${messages.length} messages.`;
      },
    };
    const contextOf = async (contextCache: false | undefined) => {
      const store = createAgentHistory({
        db: database.db,
        ...(contextCache === false ? { contextCache } : {}),
      }).forTenant(tenant);
      const thread = (await store.createThread()).id;
      for (let turn = 1; turn <= 10; turn++) {
        await store.appendMessage(thread, {
          id: `u${turn}`,
          role: 'user',
          parts: [{ type: 'text', text: `Day ${turn}: ${'what should we visit there '.repeat(12)}` }],
        });
        await store.appendMessage(thread, {
          id: `a${turn}`,
          role: 'assistant',
          parts: [{ type: 'text', text: `On day ${turn}, ${'see the museum and the park '.repeat(12)}` }],
        });
      }
      await store.appendMessage(thread, { id: 'u11', role: 'user', parts: [{ type: 'text', text: 'And day 11?' }] });
      const engine = createContextEngine({
        store: store.contextStore(thread),
        profile: smallProfile(1200, 200),
        summarizer,
        tokenCounter,
      });
      const { messages, report } = await engine.buildInitialContext();
      const summary = report.stages.find((stage) => stage.stage === 'summarize');
      return {
        messages: json(messages).replace(/summary:[0-9a-f-]+/g, 'summary'),
        summary: summary && 'status' in summary ? summary.status : undefined,
      };
    };
    const without = await contextOf(false);
    expect(without.summary).toBe('created');
    expect(await contextOf(undefined)).toEqual(without);
  });
});
