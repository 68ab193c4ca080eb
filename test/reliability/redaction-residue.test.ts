import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextEmptyError } from '../../src/context/contracts/context-empty-error.js';
import { createContextEngine } from '../../src/context/engine/context-engine.js';
import { resolveModelProfile } from '../../src/tokens/model-profile.js';
import { createAgentHistory, type TenantHistory } from '../../src/index.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';
import { scanForResidue } from './support/database-inspection.js';
import { ReliabilityTally, seededTally } from './support/reliability-report.js';
import { buildForkTree } from './support/build-fork-tree.js';
import { forkTreePlan } from './support/fork-tree.js';
import { scaled, scaledTimeout } from './support/reliability-scale.js';
import type { SeededRandom } from './support/seeded-random.js';

const CONVERSATIONS = { postgres: scaled(100), pglite: scaled(40) };
const TREES = { postgres: scaled(100), pglite: scaled(40) };

/** Where a conversation carries its secret. The ones after `data` are only reachable by span redaction. */
const MESSAGE_PLACES = ['text', 'tool-output', 'tool-input', 'reasoning', 'metadata', 'data', 'tool-payload'] as const;
/** The places only an assistant message has: reasoning, and a tool output over `maxMessageBytes` (`agent_tool_payload`). */
const ASSISTANT_PLACES: readonly Place[] = ['reasoning', 'tool-payload'];
/** The history's limit in this test: an output of {@link PAYLOAD_CHARACTERS} is over it, the rest of a message is not. */
const MAX_MESSAGE_BYTES = 16_384;
const PAYLOAD_CHARACTERS = 40_000;
const SPAN_ONLY_PLACES = [
  'title',
  'thread-metadata',
  'run-metadata',
  'run-error',
  'snapshot-json',
  'working-memory',
] as const;
/** Embeds every message for recall (its length and a checksum of its words): what the recall entries are made of. */
const EMBEDDER = {
  modelId: 'residue-embedder',
  embed: async (texts: string[]) => texts.map((text) => [text.length, text.split(' ').length]),
};
type Place = (typeof MESSAGE_PLACES)[number] | (typeof SPAN_ONLY_PLACES)[number] | 'summary';

/** The parts and metadata of a message that carries `secret` in the given places (and filler words elsewhere). */
function secretMessage(places: Set<Place>, secret: string, random: SeededRandom) {
  const filler = () => Array.from({ length: random.between(3, 12) }, () => random.word(random.between(3, 7))).join(' ');
  const parts: Array<Record<string, unknown> & { type: string }> = [{ type: 'step-start' }];
  if (places.has('reasoning')) parts.push({ type: 'reasoning', text: `thinking about ${secret} ${filler()}` });
  parts.push({
    type: 'text',
    text: places.has('text') ? `${filler()} my key is ${secret}, keep it ${filler()}` : filler(),
  });
  if (places.has('tool-input') || places.has('tool-output')) {
    parts.push({
      type: 'tool-lookup',
      toolCallId: `call-${random.word(6)}`,
      state: 'output-available',
      input: { query: places.has('tool-input') ? `find ${secret}` : filler() },
      output: {
        rows: [
          {
            value: places.has('tool-output') ? `${secret}` : filler(),
            nested: { deeper: places.has('tool-output') ? [`x ${secret} y`] : [] },
          },
        ],
      },
    });
  }
  if (places.has('data')) parts.push({ type: 'data-note', data: { note: `${secret}!` } });
  if (places.has('tool-payload')) {
    // The secret somewhere in a file too large for the message: past the preview, or in it.
    const at = random.between(0, PAYLOAD_CHARACTERS);
    const file = `${'f'.repeat(at)} ${secret} ${'g'.repeat(PAYLOAD_CHARACTERS - at)}`;
    parts.push({ type: 'tool-readFile', toolCallId: 'call-file', state: 'output-available', input: {}, output: file });
  }
  const metadata = places.has('metadata') ? { source: { header: `Bearer ${secret}` } } : { source: 'chat' };
  return { parts, metadata };
}

describe.each(BACKENDS)('redaction on %s', (backend) => {
  const database = useTestDatabase(backend, { poolSize: 4 });

  it(
    'should leave no residue of the secret in any column of any table, and never use a stale summary again',
    async () => {
      const { random, tally } = seededTally(`redaction-${backend}`);
      const history = createAgentHistory({ db: database.db, maxMessageBytes: MAX_MESSAGE_BYTES });
      const profile = resolveModelProfile({ modelId: 'gpt-4o' });

      for (let conversation = 0; conversation < CONVERSATIONS[backend]; conversation++) {
        const store: TenantHistory = history.forTenant(randomUUID());
        const secret = `zq${random.word(14)}`;
        const mode = random.chance(0.7) ? 'spans' : 'whole-message';
        // At least one place every role keeps (user messages carry no reasoning parts).
        const places = new Set<Place>([
          random.pick(MESSAGE_PLACES.filter((place) => !ASSISTANT_PLACES.includes(place))),
        ]);
        for (const place of MESSAGE_PLACES) if (random.chance(0.3)) places.add(place);
        if (random.chance(0.5)) places.add('summary');
        if (mode === 'spans') for (const place of SPAN_ONLY_PLACES) if (random.chance(0.3)) places.add(place);
        tally.attempt(`conversation:${mode}`);

        const thread = await store.createThread({
          // A user: recall indexes only the messages of threads that have one.
          userId: 'residue-user',
          title: places.has('title') ? `Keys ${secret}` : 'Keys',
          metadata: places.has('thread-metadata') ? { topic: `${secret} rotation` } : { topic: 'rotation' },
        });
        const run = await store.startRun(thread.id, {
          model: 'mock',
          metadata: places.has('run-metadata') ? { prompt: `use ${secret}` } : {},
        });
        // An odd count: the conversation ends with the user's newest input, as a context is built for it.
        const count = 2 * random.between(2, 6) + 1;
        const secretAt = new Set([random.between(1, count)]);
        if (random.chance(0.3)) secretAt.add(random.between(1, count));
        for (let sequence = 1; sequence <= count; sequence++) {
          const role = sequence % 2 === 1 ? 'user' : 'assistant';
          const { parts, metadata } = secretAt.has(sequence)
            ? secretMessage(places, secret, random)
            : secretMessage(new Set(), secret, random);
          if (role === 'assistant' && parts.some((part) => part.type === 'tool-readFile')) {
            // As a model's answer is written: never refused for its size, the file kept in agent_tool_payload.
            await store.beginAssistantMessage(thread.id, { messageId: `m-${sequence}`, runId: run.id, metadata });
            await store.finalizeMessage(thread.id, `m-${sequence}`, { status: 'completed', parts });
            tally.attempt('tool-payload-kept');
            continue;
          }
          await store.appendMessage(
            thread.id,
            {
              id: `m-${sequence}`,
              role,
              parts:
                role === 'user'
                  ? parts.filter(
                      (part) =>
                        part.type !== 'step-start' && part.type !== 'reasoning' && part.type !== 'tool-readFile',
                    )
                  : parts,
              metadata,
            } as never,
            { runId: role === 'assistant' ? run.id : undefined },
          );
        }
        if (places.has('run-error')) await store.failRun(run.id, { error: new Error(`the tool leaked ${secret}`) });
        else await store.finishRun(run.id, { status: 'completed' });

        const first = Math.min(...secretAt);
        const last = Math.max(...secretAt);
        const covering = await store.writeSummary(thread.id, {
          fromSequence: 1,
          throughSequence: last,
          content: places.has('summary') ? `The user shared the key ${secret}.` : 'The user shared a key.',
          tokenCount: 8,
          policyVersion: 'reliability-1',
        });
        // A summary that covers none of the secret's messages must stay valid.
        const clean =
          last + 1 < count
            ? await store.writeSummary(thread.id, {
                fromSequence: last + 1,
                throughSequence: count - 1,
                content: 'Later small talk.',
                tokenCount: 3,
                policyVersion: 'reliability-1',
              })
            : undefined;
        await store.writeSnapshot(thread.id, {
          expectedVersion: 0,
          throughSequence: last,
          summaryId: covering.id,
          includedSequences: Array.from({ length: count - last }, (_, index) => last + index + 1),
          pruned: { previews: [], note: places.has('snapshot-json') ? `preview of ${secret}` : 'preview' },
          budget: { available: 1000 },
          policyVersion: 'reliability-1',
          messagesHash: `hash-${conversation}`,
        });
        const forks = [];
        if (random.chance(0.5))
          forks.push(await store.forkThread(thread.id, { atSequence: random.between(first, count) }));
        if (random.chance(0.2)) forks.push(await store.forkThread(thread.id, { atSequence: random.between(0, count) }));
        // Memory derived from the messages (their recall entries, the forks' too), and a document that quotes it.
        await store.embedPendingMemory({ embedder: EMBEDDER });
        await store.updateWorkingMemory({
          scope: 'thread',
          threadId: thread.id,
          content: places.has('working-memory') ? `the key is ${secret}` : 'no key',
          expectedVersion: 0,
        });
        const before = await scanForResidue(database.admin, secret);
        tally.expect(before.length > 0, 'the secret was not stored in the first place', () => secret);
        if (places.has('text'))
          tally.expect(
            before.some((residue) => residue.table === 'agent_memory'),
            'no recall entry held the secret before redaction',
            () => secret,
          );

        for (const sequence of secretAt) {
          await store.redactMessage(thread.id, `m-${sequence}`, {
            spans: mode === 'spans' ? [secret] : undefined,
            actor: 'dpo',
            reason: 'secret shared',
          });
        }
        tally.attempt('redaction', secretAt.size);

        const residues = await scanForResidue(database.admin, secret);
        tally.expect(
          residues.length === 0,
          'a residue of the secret survived redaction',
          () =>
            `${mode} places=${[...places].join(',')} forks=${forks.length}: ${residues.map((residue) => `${residue.table}: ${residue.text.slice(0, 120)}`).join(' | ')}`,
        );
        const hits = await store.searchMessages(secret);
        tally.expect(hits.length === 0, 'search still finds the secret', () => `${hits.length} hits`);

        // Stale summaries and snapshots are never used again; the clean summary still is.
        for (const threadId of [thread.id, ...forks.map((fork) => fork.id)]) {
          const view = await store.loadContext(threadId);
          tally.attempt('context:loaded-after-redaction');
          tally.expect(
            view.latestSummary?.id !== covering.id && view.summary?.id !== covering.id,
            'loadContext returned the stale summary',
            () => threadId,
          );
          tally.expect(
            !view.latestSummary?.stale && !view.summary?.stale && !view.snapshot?.stale,
            'loadContext returned something stale',
            () => threadId,
          );
          if (threadId === thread.id && clean)
            tally.expect(
              view.latestSummary?.id === clean.id,
              'the summary that covers no redacted message was dropped',
              () => JSON.stringify(view.latestSummary),
            );
          // A fork cut before any eligible user message has an empty context: a typed refusal, nothing to leak.
          const { messages } = await createContextEngine({ store: store.contextStore(threadId), profile })
            .buildInitialContext({ instructions: 'Be brief.' })
            .catch((error: unknown) => {
              if (error instanceof ContextEmptyError) return { messages: [] };
              throw error;
            });
          tally.expect(
            !JSON.stringify(messages).toLowerCase().includes(secret),
            'the next context still carries the secret',
            () => threadId,
          );
        }
        const summaries = await store.listSummaries(thread.id);
        const withdrawn = summaries.find((summary) => summary.id === covering.id);
        tally.expect(withdrawn?.stale === true, 'the covering summary is not stale', () => JSON.stringify(withdrawn));
      }
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    scaledTimeout(90_000),
  );

  // Random fork trees over a thread that carries the secret (forks of forks, cut anywhere, some appending messages
  // whose ids and sequences repeat the secret message's), random deletions anywhere in the tree (the root too; by
  // deleteThread, soft delete or retention), a redaction in a random live thread holding a copy: the secret is left in
  // no column of any table, and every message that is not a copy of it is left exactly as it was.
  it(
    'should leave no residue in fork trees with deleted threads, and touch no message that is not a copy',
    async () => {
      const tally = new ReliabilityTally(`redaction-fork-trees-${backend}`);
      const history = createAgentHistory({ db: database.db });
      await fc.assert(
        fc.asyncProperty(forkTreePlan, async (plan) => {
          const store = history.forTenant(randomUUID());
          const secret = `zq${randomUUID().replaceAll('-', '').slice(0, 14)}`;
          const { threads, copies, untouched, sameIdElsewhere } = await buildForkTree(
            store,
            plan,
            secret,
            database.admin,
          );
          const live = copies.filter((copy) => !threads[copy.thread]!.deleted);
          tally.attempt(`tree:${plan.mode}`);
          tally.attempt('forks', plan.forks.length);
          tally.attempt('deleted-threads', threads.filter((thread) => thread.deleted !== false).length);
          if (live.length === 0) return tally.note('trees-without-a-live-copy');
          const before = await scanForResidue(database.admin, secret);
          tally.expect(before.length > 0, 'the secret was not stored in the first place', () => secret);
          // The case the walk along parent_thread_id missed: a copy in a thread deleted since, and copies left.
          if (copies.some((copy) => threads[copy.thread]!.deleted === true)) tally.note('trees-with-a-deleted-copy');
          const target = live[plan.target % live.length]!;
          await store.redactMessage(threads[target.thread]!.id, target.messageId, {
            spans: plan.mode === 'spans' ? [secret] : undefined,
            actor: 'dpo',
            reason: 'secret shared',
          });
          tally.attempt('copies-redacted', copies.filter((copy) => threads[copy.thread]!.deleted !== true).length);
          const residues = await scanForResidue(database.admin, secret);
          tally.expect(
            residues.length === 0,
            'a residue of the secret survived redaction in a fork tree',
            () =>
              `${JSON.stringify(plan)}: ${residues.map((residue) => `${residue.table}: ${residue.text.slice(0, 100)}`).join(' | ')}`,
          );
          const after = await database.admin.query<{ id: string; parts: unknown; context_state: string }>(
            'select id, parts, context_state from agent_message where tenant_id = $1 and id = any($2::uuid[])',
            [store.tenantId, untouched.map((row) => row.id)],
          );
          const now = new Map(after.map((row) => [row.id, JSON.stringify([row.parts, row.context_state])]));
          tally.attempt('messages-not-copies', untouched.length);
          tally.attempt('messages-not-copies-with-the-same-id-and-sequence', sameIdElsewhere);
          for (const row of untouched)
            tally.expect(
              now.get(row.id) === undefined || now.get(row.id) === row.state,
              'a message that is not a copy was changed',
              () => `${JSON.stringify(plan)}: ${row.id}`,
            );
        }),
        { numRuns: TREES[backend], seed: 12_2026 },
      );
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    scaledTimeout(120_000),
  );
});
