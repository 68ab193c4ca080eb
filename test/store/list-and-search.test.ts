import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgentHistory, InvalidArgumentError, type TenantHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { text } from '../support/fixtures.js';

const range = (from: number, through: number, step = 1) =>
  Array.from({ length: Math.floor((from - through) / step) + 1 }, (_, index) => from - index * step);

const OPERATOR_SOUP = ["'; drop table x; --", '&|!():*<->', '"unclosed', '-', 'or or', 'or', '!!!', '((', '<->', ':*'];

describe.each(BACKENDS)('listMessages and searchMessages on %s', (backend) => {
  const database = useTestDatabase(backend);

  const newStore = () => createAgentHistory({ db: database.db }).forTenant(randomUUID());

  describe('listMessages', () => {
    let store: TenantHistory;
    let threadId: string;
    beforeAll(async () => {
      store = newStore();
      threadId = (await store.createThread()).id;
      // Odd sequences are user messages, even ones assistant messages.
      for (let sequence = 1; sequence <= 120; sequence++) {
        const role = sequence % 2 === 1 ? ('user' as const) : ('assistant' as const);
        await store.appendMessage(threadId, { id: `m-${sequence}`, role, parts: [text(`message ${sequence}`)] });
      }
    });

    it('should page 120 messages as 50, 50, 20 newest first with no duplicate and no gap', async () => {
      const first = await store.listMessages(threadId, { limit: 50 });
      const second = await store.listMessages(threadId, { limit: 50, before: first.nextCursor! });
      const third = await store.listMessages(threadId, { limit: 50, before: second.nextCursor! });
      expect(first.messages.map((stored) => stored.sequence)).toEqual(range(120, 71));
      expect(first.nextCursor).toBe(71);
      expect(second.messages.map((stored) => stored.sequence)).toEqual(range(70, 21));
      expect(second.nextCursor).toBe(21);
      expect(third.messages.map((stored) => stored.sequence)).toEqual(range(20, 1));
      expect(third.nextCursor).toBeNull();
      expect(third.messages.at(-1)!.message).toEqual({ id: 'm-1', role: 'user', parts: [text('message 1')] });
    });

    it('should end with a null cursor when the last page is exactly full', async () => {
      const first = await store.listMessages(threadId, { limit: 60 });
      const second = await store.listMessages(threadId, { limit: 60, before: first.nextCursor! });
      expect([first.messages.length, first.nextCursor, second.messages.length, second.nextCursor]).toEqual([
        60,
        61,
        60,
        null,
      ]);
      expect(second.messages.map((stored) => stored.sequence)).toEqual(range(60, 1));
    });

    it('should default to 50 newest messages', async () => {
      const page = await store.listMessages(threadId);
      expect(page.messages.map((stored) => stored.sequence)).toEqual(range(120, 71));
    });

    it('should filter by role across pages', async () => {
      const first = await store.listMessages(threadId, { roles: ['user'], limit: 50 });
      expect(first.messages.map((stored) => stored.sequence)).toEqual(range(119, 21, 2));
      expect(first.messages.every((stored) => stored.message.role === 'user')).toBe(true);
      expect(first.nextCursor).toBe(21);
      const second = await store.listMessages(threadId, { roles: ['user'], limit: 50, before: first.nextCursor! });
      expect(second.messages.map((stored) => stored.sequence)).toEqual(range(19, 1, 2));
      expect(second.nextCursor).toBeNull();
      const assistant = await store.listMessages(threadId, { roles: ['assistant'], limit: 3 });
      expect(assistant.messages.map((stored) => stored.sequence)).toEqual([120, 118, 116]);
      const both = await store.listMessages(threadId, { roles: ['user', 'assistant'], limit: 3 });
      expect(both.messages.map((stored) => stored.sequence)).toEqual([120, 119, 118]);
    });

    it.each([0, -1, 501, 2.5, Number.NaN])('should reject limit %s with an error naming the value', async (limit) => {
      const error = await store.listMessages(threadId, { limit }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect([(error as InvalidArgumentError).argument, (error as InvalidArgumentError).value]).toEqual([
        'options.limit',
        limit,
      ]);
      expect((error as InvalidArgumentError).message).toBe(
        `Invalid options.limit ${String(limit)}: expected an integer from 1 to 500.`,
      );
    });

    it('should reject a bad cursor or role filter', async () => {
      await expect(store.listMessages(threadId, { before: 0 })).rejects.toThrow(
        'Invalid options.before 0: expected an integer from 1 to 9007199254740991.',
      );
      await expect(store.listMessages(threadId, { roles: ['robot' as never] })).rejects.toThrow(
        /Invalid options\.roles \["robot"\]/,
      );
      await expect(store.listMessages(threadId, { roles: [] })).rejects.toThrow(InvalidArgumentError);
    });
  });

  describe('searchMessages', () => {
    let tenantA: TenantHistory;
    let tenantB: TenantHistory;
    let bakingId: string;
    let pizzaId: string;
    let foreignId: string;
    beforeAll(async () => {
      tenantA = newStore();
      tenantB = newStore();
      bakingId = (await tenantA.createThread({ userId: 'alice' })).id;
      pizzaId = (await tenantA.createThread({ userId: 'bob' })).id;
      foreignId = (await tenantB.createThread({ userId: 'alice' })).id;
      await tenantA.appendMessage(bakingId, {
        id: 'b-1',
        role: 'user',
        parts: [text('How do I bake sourdough bread at home?')],
      });
      await tenantA.appendMessage(bakingId, {
        id: 'b-2',
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'thinkingonlyword about sourdough', state: 'done' },
          {
            type: 'tool-lookup',
            toolCallId: 'call-1',
            state: 'output-available',
            input: { query: 'toolonlyword' },
            output: { hit: 'tooloutputword' },
          },
          text('Sourdough needs a starter. Feed the sourdough starter daily and keep your sourdough warm.'),
        ],
      });
      await tenantA.appendMessage(bakingId, { id: 'b-3', role: 'user', parts: [text('What about rye bread?')] });
      await tenantA.appendMessage(bakingId, {
        id: 'b-4',
        role: 'assistant',
        parts: [text('Rye is denser than wheat.')],
      });
      await tenantA.appendMessage(pizzaId, {
        id: 'p-1',
        role: 'user',
        parts: [text('Best pizza dough recipe <svg/onload=alert(1)>')],
      });
      await tenantA.appendMessage(pizzaId, {
        id: 'p-2',
        role: 'assistant',
        parts: [text("Pizza dough: bread flour, water, yeast & salt. Don't rush it.")],
      });
      await tenantB.appendMessage(foreignId, {
        id: 'f-1',
        role: 'user',
        parts: [text('Tenant B sourdough bread and pizza secrets')],
      });
    });

    const ids = (hits: { messageId: string }[]) => hits.map((hit) => hit.messageId);

    it('should rank the hits and mark the matches with <b> in escaped HTML snippets', async () => {
      const hits = await tenantA.searchMessages('sourdough');
      expect(
        hits.map(({ threadId, sequence, messageId, role, snippet }) => ({
          threadId,
          sequence,
          messageId,
          role,
          snippet,
        })),
      ).toEqual([
        {
          threadId: bakingId,
          sequence: 2,
          messageId: 'b-2',
          role: 'assistant',
          snippet:
            '<b>Sourdough</b> needs a starter. Feed the <b>sourdough</b> starter daily and keep your <b>sourdough</b> warm',
        },
        {
          threadId: bakingId,
          sequence: 1,
          messageId: 'b-1',
          role: 'user',
          snippet: 'bake <b>sourdough</b> bread at home',
        },
      ]);
      expect(hits[0]!.rank).toBeGreaterThan(hits[1]!.rank);
      const pizza = await tenantA.searchMessages('pizza');
      expect(pizza.map((hit) => hit.snippet).sort()).toEqual([
        '<b>Pizza</b> dough: bread flour, water, yeast &amp; salt. Don&#39;t rush',
        'Best <b>pizza</b> dough recipe &lt;svg/onload=alert',
      ]);
    });

    it('should support phrases, or and -word', async () => {
      expect(ids(await tenantA.searchMessages('bread flour')).sort()).toEqual(['p-2']);
      expect(ids(await tenantA.searchMessages('bread home')).sort()).toEqual(['b-1']);
      expect(ids(await tenantA.searchMessages('"flour bread"'))).toEqual([]);
      expect(ids(await tenantA.searchMessages('"bread flour"'))).toEqual(['p-2']);
      expect(ids(await tenantA.searchMessages('rye or pizza')).sort()).toEqual(['b-3', 'b-4', 'p-1', 'p-2']);
      expect(ids(await tenantA.searchMessages('bread')).sort()).toEqual(['b-1', 'b-3', 'p-2']);
      expect(ids(await tenantA.searchMessages('bread -rye')).sort()).toEqual(['b-1', 'p-2']);
    });

    it("should stay inside the tenant: B never sees A's hits, nor A B's", async () => {
      expect(ids(await tenantA.searchMessages('secrets'))).toEqual([]);
      expect(ids(await tenantB.searchMessages('sourdough'))).toEqual(['f-1']);
      expect(ids(await tenantB.searchMessages('rye or dough or starter'))).toEqual([]);
      expect(ids(await tenantB.searchMessages('sourdough', { threadId: bakingId }))).toEqual([]);
      expect(ids(await tenantA.searchMessages('sourdough', { threadId: foreignId }))).toEqual([]);
    });

    it('should filter by thread and by user', async () => {
      expect(ids(await tenantA.searchMessages('bread', { threadId: pizzaId }))).toEqual(['p-2']);
      expect(ids(await tenantA.searchMessages('bread', { userId: 'alice' })).sort()).toEqual(['b-1', 'b-3']);
      expect(ids(await tenantA.searchMessages('bread', { userId: 'bob' }))).toEqual(['p-2']);
      expect(ids(await tenantA.searchMessages('bread', { userId: 'carol' }))).toEqual([]);
      expect(ids(await tenantA.searchMessages('bread or rye', { limit: 2 }))).toHaveLength(2);
    });

    it('should not index reasoning or tool parts', async () => {
      for (const word of ['thinkingonlyword', 'toolonlyword', 'tooloutputword', 'lookup', 'call-1']) {
        expect(await tenantA.searchMessages(word)).toEqual([]);
      }
      const [row] = await database.admin.query<{ vector: string }>(
        "select search_vector::text as vector from agent_message where message_id = 'b-2'",
      );
      expect(row!.vector).toBe(
        "'a':3 'and':10 'daily':9 'feed':5 'keep':11 'needs':2 'sourdough':1,7,13 'starter':4,8 'the':6 'warm':14 'your':12",
      );
    });

    it('should refuse an empty query or one with NUL with a typed error', async () => {
      await expect(tenantA.searchMessages('')).rejects.toThrow('Invalid query "": expected a non-empty search string.');
      await expect(tenantA.searchMessages('   ')).rejects.toThrow(InvalidArgumentError);
      await expect(tenantA.searchMessages('sour\u0000dough')).rejects.toThrow(
        'Invalid query "sour\\u0000dough": expected at most 1000 characters, without NUL or lone surrogates.',
      );
      await expect(tenantA.searchMessages('a\ud800')).rejects.toThrow(InvalidArgumentError);
      await expect(tenantA.searchMessages('bread', { limit: 0 })).rejects.toThrow(
        'Invalid options.limit 0: expected an integer from 1 to 100.',
      );
    });

    it.each(OPERATOR_SOUP)('should return no hits, never an error, for %j', async (query) => {
      expect(await tenantA.searchMessages(query)).toEqual([]);
    });

    it('should find hits through operator noise', async () => {
      expect(ids(await tenantA.searchMessages('"sourdough'))).toEqual(['b-2', 'b-1']);
      expect(ids(await tenantA.searchMessages('rye &|!'))).toEqual(['b-4', 'b-3']);
      expect(ids(await tenantA.searchMessages('((rye)) :*'))).toEqual(['b-4', 'b-3']);
      expect(ids(await tenantA.searchMessages('or or sourdough'))).toEqual(['b-2', 'b-1']);
      expect(ids(await tenantA.searchMessages('- sourdough')).sort()).toEqual(['b-3', 'b-4', 'p-1', 'p-2']);
      expect(ids(await tenantA.searchMessages("sourdough'; drop table agent_message; --"))).toEqual([]);
      const [{ count }] = (await database.admin.query<{ count: string }>(
        'select count(*)::text as count from agent_message',
      )) as [{ count: string }];
      expect(Number(count)).toBeGreaterThanOrEqual(7);
    });
  });
});
