import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createContextEngine } from '../../src/context/engine/context-engine.js';
import { createAgentHistory, type TenantHistory } from '../../src/index.js';
import type { StoredMessagePart } from '../../src/schema/index.js';
import { rowsOf, type AgentHistoryDatabase } from '../../src/tenant/database.js';
import { withTenant } from '../../src/tenant/with-tenant.js';
import { resolveModelProfile } from '../../src/tokens/model-profile.js';
import { text } from '../support/fixtures.js';
import { BACKENDS, itOffCitus, useTestDatabase } from '../support/test-database.js';

// `agent_message.content_version` is the database's version of a message's parts: every UPDATE that changes them
// raises it, whoever writes (the store's own writes, a plain UPDATE as the app login), and none lowers it. A cache of
// a message's converted form keyed by (row, content_version) relies on exactly this. The parts are json, compared as
// their text: byte-identical parts are no change; the same value in other text (key order, spacing) is one.
describe.each(BACKENDS)('content_version kept by the database on %s', (backend) => {
  const database = useTestDatabase(backend);

  async function threadWith(...messages: Array<{ id: string; role: 'user' | 'assistant'; parts: unknown[] }>) {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    for (const message of messages) await store.appendMessage(thread.id, message as never);
    return { store, threadId: thread.id };
  }

  /** A plain UPDATE of one message as the app login (not the owner, no BYPASSRLS), returning its content_version. */
  async function update(store: TenantHistory, threadId: string, messageId: string, set: SQL[]): Promise<number> {
    const rows = await withTenant(database.db, { tenantId: store.tenantId, role: 'agent_history_app' }, async (tx) =>
      rowsOf<{ content_version: number }>(
        await tx.execute(
          sql`update agent_message set ${sql.join(set, sql`, `)}
              where tenant_id = ${store.tenantId} and thread_id = ${threadId} and message_id = ${messageId}
              returning content_version`,
        ),
      ),
    );
    expect(rows).toHaveLength(1);
    return rows[0]!.content_version;
  }
  const parts = (value: unknown) => sql`parts = ${JSON.stringify(value)}::json`;
  const version = (value: number) => sql`content_version = ${value}`;
  const stored = async (store: TenantHistory, threadId: string, messageId: string) =>
    (await store.getMessage(threadId, messageId)).contentVersion;

  it('should raise it by exactly one on an UPDATE that changes the parts, and leave it for the same parts', async () => {
    const { store, threadId } = await threadWith({ id: 'u', role: 'user', parts: [text('before')] });
    expect(await update(store, threadId, 'u', [parts([text('after')])])).toBe(2);
    expect(await stored(store, threadId, 'u')).toBe(2);
    // The same parts, byte for byte, or with another column changed: no change.
    expect(await update(store, threadId, 'u', [parts([text('after')])])).toBe(2);
    expect(await update(store, threadId, 'u', [parts([text('after')]), sql`metadata = '{"x":1}'`])).toBe(2);
    expect(await update(store, threadId, 'u', [sql`pinned = true`])).toBe(2);
    // The same value in other text, keys in another order or spaced: readers now get other text, so a change.
    expect(await update(store, threadId, 'u', [parts([{ text: 'after', type: 'text' }])])).toBe(3);
    expect(await update(store, threadId, 'u', [sql`parts = '[{"text": "after", "type": "text"}]'`])).toBe(4);
    expect(await update(store, threadId, 'u', [sql`parts = '[{"text": "after", "type": "text"}]'`])).toBe(4);
    expect(await update(store, threadId, 'u', [parts([text('after'), text('more')])])).toBe(5);
    expect(await stored(store, threadId, 'u')).toBe(5);
  });

  it('should never let an UPDATE lower it, with or without a change of parts, and keep an explicit higher one', async () => {
    const { store, threadId } = await threadWith({ id: 'u', role: 'user', parts: [text('v1')] });
    expect(await update(store, threadId, 'u', [parts([text('v2')]), version(5)])).toBe(5);
    // Lower, to the stored value or below it (0 and null break the column's rules, and are kept from them too).
    expect(await update(store, threadId, 'u', [version(1)])).toBe(5);
    expect(await update(store, threadId, 'u', [version(0)])).toBe(5);
    expect(await update(store, threadId, 'u', [sql`content_version = null`])).toBe(5);
    expect(await update(store, threadId, 'u', [version(5)])).toBe(5);
    // Lower, or equal, with new parts: one above the stored value.
    expect(await update(store, threadId, 'u', [parts([text('v3')]), version(2)])).toBe(6);
    expect(await update(store, threadId, 'u', [parts([text('v4')]), version(6)])).toBe(7);
    // Higher without a change of parts: kept (a writer may skip versions; it can never go back).
    expect(await update(store, threadId, 'u', [version(9)])).toBe(9);
    expect(await stored(store, threadId, 'u')).toBe(9);
  });

  // Off Citus: there the coordinator's own checks of DDL on a distributed table may answer first, in other words.
  itOffCitus('should not let the app login switch the trigger off', async () => {
    const { store, threadId } = await threadWith({ id: 'u', role: 'user', parts: [text('v1')] });
    for (const statement of [
      'alter table agent_message disable trigger agent_message_content_version',
      'drop trigger agent_message_content_version on agent_message',
      "set local session_replication_role = 'replica'",
    ]) {
      const error = await withTenant(database.db, { tenantId: store.tenantId, role: 'agent_history_app' }, (tx) =>
        tx.execute(sql.raw(statement)),
      ).catch((caught: unknown) => caught);
      expect(String((error as Error).cause ?? error)).toMatch(/must be owner|permission denied/);
    }
    expect(await update(store, threadId, 'u', [parts([text('v2')])])).toBe(2);
  });

  it('should raise it on checkpoint, finalize and reopen, by one per change, and once only on redaction', async () => {
    const { store, threadId } = await threadWith({ id: 'u', role: 'user', parts: [text('hello')] });
    const begun = await store.beginAssistantMessage(threadId, { messageId: 'a' });
    expect(begun.stored.contentVersion).toBe(1);
    const first: StoredMessagePart[] = [{ type: 'text', text: 'Hel', state: 'streaming' }];
    const second: StoredMessagePart[] = [{ type: 'text', text: 'Hello th', state: 'streaming' }];
    const done: StoredMessagePart[] = [{ type: 'text', text: 'Hello there.', state: 'done' }];
    // Each write returns the version the database gave the row.
    expect((await store.checkpointMessage(threadId, 'a', { parts: first })).contentVersion).toBe(2);
    expect((await store.checkpointMessage(threadId, 'a', { parts: first })).contentVersion).toBe(2);
    expect((await store.checkpointMessage(threadId, 'a', { parts: second })).contentVersion).toBe(3);
    expect((await store.finalizeMessage(threadId, 'a', { status: 'completed', parts: done })).contentVersion).toBe(4);
    // A retried finalize with the same status changes nothing.
    expect((await store.finalizeMessage(threadId, 'a', { status: 'completed', parts: done })).contentVersion).toBe(4);
    const answered: StoredMessagePart[] = [...done, { type: 'text', text: 'And more.' }];
    const reopened = await store.reopenAssistantMessage(threadId, 'a', { expectedParts: done, parts: answered });
    expect([reopened.updated, reopened.stored.contentVersion]).toEqual([true, 5]);
    // The claim of a continuation writes the same parts again: no change, no new version.
    const run = await store.startRun(threadId);
    const claimed = await store.reopenAssistantMessage(threadId, 'a', {
      expectedParts: answered,
      parts: answered,
      runId: run.id,
    });
    expect([claimed.updated, claimed.stored.status, claimed.stored.contentVersion]).toEqual([true, 'streaming', 5]);
    const final = [...answered, { type: 'text', text: 'Done.', state: 'done' }] as StoredMessagePart[];
    expect((await store.finalizeMessage(threadId, 'a', { status: 'completed', parts: final })).contentVersion).toBe(6);
    // The store's own `content_version + 1` and the trigger together: exactly one, not two.
    expect((await store.redactMessage(threadId, 'a', { actor: 'dpo', reason: 'test' })).contentVersion).toBe(7);
    expect((await store.redactMessage(threadId, 'u', { actor: 'dpo', reason: 'test' })).contentVersion).toBe(2);
    expect([await stored(store, threadId, 'a'), await stored(store, threadId, 'u')]).toEqual([7, 2]);
  });

  // A second writer: the UPDATE that waited for the first one's row lock runs the trigger on the row the first
  // committed, so each change of parts counts (read committed re-reads the row before the BEFORE trigger fires).
  if (backend === 'postgres')
    itOffCitus('should count each of two writers that change the parts at once', async () => {
      const { store, threadId } = await threadWith({ id: 'u', role: 'user', parts: [text('v1')] });
      const client = postgres(database.appUrl!, { max: 1, onnotice: () => {} });
      try {
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        let signal!: () => void;
        const holding = new Promise<void>((resolve) => (signal = resolve));
        const scope = { tenantId: store.tenantId, role: 'agent_history_app' };
        const first = withTenant(drizzle({ client }) as unknown as AgentHistoryDatabase, scope, async (tx) => {
          await tx.execute(sql`update agent_message set ${parts([text('first')])}
            where tenant_id = ${store.tenantId} and thread_id = ${threadId} and message_id = 'u'`);
          signal();
          await released;
        });
        await holding;
        const second = update(store, threadId, 'u', [parts([text('second')])]);
        let settled = false;
        void second.finally(() => (settled = true)).catch(() => {});
        // Until the second waits for the lock (or ends without waiting, which the assertion below reports).
        while (!settled) {
          const [row] = await database.admin.query<{ waiting: number }>(
            "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
          );
          if (row!.waiting > 0) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        const waited = !settled;
        release();
        await first;
        expect([waited, await second]).toEqual([true, 3]);
      } finally {
        await client.end();
      }
    });

  // Random sequences of plain UPDATEs of one row: parts new, the same value (keys reordered or not) or not set; an
  // explicit content_version lower (down to 0), equal, higher or not set. After each: strictly higher than before
  // exactly when the parts' text changed, never lower, and exactly max(explicit, before + 1 if it changed else before).
  it('should rise exactly when the parts change and never go down, over any sequence of UPDATEs', async () => {
    const write = fc.record({
      parts: fc.constantFrom('new', 'same', 'same-reordered', 'unset'),
      version: fc.oneof(
        fc.constant({ kind: 'unset' as const, by: 0 }),
        fc.record({ kind: fc.constantFrom('lower' as const, 'equal' as const, 'higher' as const), by: fc.nat(4) }),
      ),
    });
    const { store, threadId } = await threadWith({ id: 'u', role: 'user', parts: [text('0')] });
    let current = 1;
    let value = '0';
    let storedText = JSON.stringify([text(value)]);
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 8 }), async (writes) => {
        for (const { parts: how, version: explicit } of writes) {
          if (how === 'new') value = randomUUID();
          const written = how === 'same-reordered' ? [{ text: value, type: 'text' }] : [text(value)];
          const changed = how !== 'unset' && JSON.stringify(written) !== storedText;
          if (how !== 'unset') storedText = JSON.stringify(written);
          const target =
            explicit.kind === 'unset'
              ? undefined
              : explicit.kind === 'lower'
                ? Math.max(0, current - 1 - explicit.by)
                : explicit.kind === 'equal'
                  ? current
                  : current + 1 + explicit.by;
          const set = [
            ...(how === 'unset' ? [sql`updated_at = now()`] : [parts(written)]),
            ...(target === undefined ? [] : [version(target)]),
          ];
          const after = await update(store, threadId, 'u', set);
          if (changed) expect(after).toBeGreaterThan(current);
          else expect(after).toBeGreaterThanOrEqual(current);
          expect(after).toBe(Math.max(target ?? current, current + (changed ? 1 : 0)));
          current = after;
        }
        expect(await stored(store, threadId, 'u')).toBe(current);
      }),
      { numRuns: 40 },
    );
  });

  // What the context engine does with it: a summary made from a message whose parts changed while the summarizer ran
  // (an edit, a continuation: not only a redaction) is refused, and the engine trims instead, as after a redaction.
  it('should make the engine fall back to trimming when a covered message changes while it summarizes', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const { id: threadId } = await store.createThread();
    for (let turn = 0; turn < 24; turn++) {
      const words = Array.from({ length: 40 }, (_, index) => `word${(turn * 40 + index) % 97}`).join(' ');
      await store.appendMessage(threadId, { id: `u-${turn}`, role: 'user', parts: [text(`Question: ${words}`)] });
      await store.appendMessage(threadId, { id: `a-${turn}`, role: 'assistant', parts: [text(`Answer: ${words}`)] });
    }
    await store.appendMessage(threadId, { id: 'u-last', role: 'user', parts: [text('And the last question?')] });
    let calls = 0;
    const engine = () =>
      createContextEngine({
        store: store.contextStore(threadId),
        profile: resolveModelProfile({
          modelId: 'content-version-small',
          overrides: { family: 'openai', contextWindow: 3_000, maxOutputTokens: 256 },
        }),
        policy: { summary: { reserveTokens: 300 } },
        summarizer: {
          id: 'edits-meanwhile',
          summarize: async () => {
            if (++calls === 1) await update(store, threadId, 'a-1', [parts([text('Answer: corrected.')])]);
            return 'The user asked questions.';
          },
        },
      });

    const { report } = await engine().buildInitialContext({ instructions: 'Be brief.' });
    const stage = report.stages.find((entry) => entry.stage === 'summarize') as { status?: string; error?: string };
    expect(stage.status).toBe('failed');
    expect(stage.error).toMatch(/could not be stored: Stale summary source \(message 4\) version: expected 1/);
    // The fallback: the turns that did not fit are trimmed (the select stage reports them), and nothing is stored.
    const select = report.stages.find((entry) => entry.stage === 'select') as { removed: Array<{ reason: string }> };
    expect(select.removed.length).toBeGreaterThan(0);
    expect(new Set(select.removed.map((removal) => removal.reason))).toEqual(new Set(['turn-trimmed']));
    expect(await store.listSummaries(threadId)).toEqual([]);
    // Read again, the same thread is summarized.
    const again = await engine().buildInitialContext({ instructions: 'Be brief.' });
    expect(again.report.stages.find((entry) => entry.stage === 'summarize')).toMatchObject({ status: 'created' });
  });
});
