import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createContextEngine } from '../../src/context/engine/context-engine.js';
import { filterStoredMessages } from '../../src/context/stages/filter-stored-messages.js';
import { resolveModelProfile } from '../../src/tokens/model-profile.js';
import { createAgentHistory } from '../../src/index.js';
import { useTestDatabase } from '../support/test-database.js';
import { crashingWriterParts } from './fixtures/crashing-writer-parts.js';
import { seededTally } from './support/reliability-report.js';
import { scaled } from './support/reliability-scale.js';
import { runAndKillWriter } from './support/spawn-crashing-writer.js';
import { unpairedToolParts } from './support/tool-pairing.js';

/** Crashed writers per run: each is a child process that checkpoints 0 to 3 times and is SIGKILLed. */
const CRASHES = scaled(6);
/** Starting a child process through tsx takes seconds alone and tens of seconds on a loaded machine. */
const MS_PER_CRASH = 60_000;
const LEASE_MS = 60_000;

describe('an app process killed mid-stream on postgres', () => {
  const database = useTestDatabase('postgres', { poolSize: 4 });

  it(
    'should keep the checkpointed parts, mark the answer failed after its lease, and never put a dangling tool call in the next context',
    async () => {
      const { random, tally } = seededTally('faults-process-killed-postgres');
      const history = createAgentHistory({ db: database.db, leaseMs: LEASE_MS });
      const afterLease = createAgentHistory({
        db: database.db,
        leaseMs: LEASE_MS,
        _internal: { now: () => new Date(Date.now() + LEASE_MS + 5_000) },
      });
      const profile = resolveModelProfile({ modelId: 'gpt-4o' });

      for (let round = 0; round < CRASHES; round++) {
        // A clock stopped before the writer begins: its lease ends LEASE_MS after this, however long the child takes.
        const roundStartedAt = new Date();
        const whileLeased = createAgentHistory({
          db: database.db,
          leaseMs: LEASE_MS,
          _internal: { now: () => roundStartedAt },
        });
        const tenantId = randomUUID();
        const store = history.forTenant(tenantId);
        const thread = await store.createThread({ title: 'Weather' });
        await store.appendMessage(thread.id, {
          id: `u-${round}`,
          role: 'user',
          parts: [{ type: 'text', text: 'What is the weather in Paris?' }],
        });
        const messageId = `a-${round}`;
        const checkpoints = round < 4 ? round : random.between(0, 3);
        tally.attempt('fault:writer-process-sigkilled');
        await runAndKillWriter({
          appUrl: database.appUrl!,
          tenantId,
          threadId: thread.id,
          messageId,
          checkpoints,
          leaseMs: LEASE_MS,
        });
        const expectedParts = crashingWriterParts(messageId, checkpoints);

        // While the lease runs, the answer belongs to its (dead) writer: not recovered, and not in the context.
        const early = await whileLeased.forTenant(tenantId).recoverAbandonedMessages();
        tally.expect(
          early.length === 0,
          'an answer was recovered before its lease expired',
          () => `${early.length} recovered`,
        );
        const during = await store.loadContext(thread.id);
        const filteredDuring = filterStoredMessages({ messages: during.tail });
        tally.expect(
          filteredDuring.messages.every((message) => message.message.id !== messageId),
          'an unfinished answer reached the context',
          () => messageId,
        );

        // After the lease: failed, with exactly the parts its last checkpoint saved.
        const recovered = await afterLease.forTenant(tenantId).recoverAbandonedMessages();
        tally.attempt('recovery:after-lease');
        const answer = recovered.find((message) => message.message.id === messageId);
        if (
          !tally.expect(
            answer !== undefined && recovered.length === 1,
            'the abandoned answer was not recovered',
            () => `${recovered.length} recovered`,
          )
        )
          continue;
        tally.expect(answer!.status === 'failed', 'the recovered answer is not failed', () => answer!.status);
        tally.expect(
          isDeepStrictEqual(answer!.message.parts, expectedParts),
          'the recovered answer lost checkpointed parts',
          () => JSON.stringify(answer!.message.parts),
        );
        tally.expect(
          (answer!.message.metadata as { agentHistory?: { failure?: string } } | undefined)?.agentHistory?.failure ===
            'lease-expired',
          'the recovered answer does not say why it failed',
          () => JSON.stringify(answer!.message.metadata),
        );
        const again = await afterLease.forTenant(tenantId).recoverAbandonedMessages();
        tally.expect(again.length === 0, 'a second recovery found the answer again', () => `${again.length}`);

        // The next turn: the filter closes the dangling call, and the engine's model messages pair every call.
        await store.appendMessage(thread.id, {
          id: `u2-${round}`,
          role: 'user',
          parts: [{ type: 'text', text: 'Are you still there?' }],
        });
        const view = await store.loadContext(thread.id);
        const filtered = filterStoredMessages({ messages: view.tail });
        const dangling = expectedParts.filter((part) => part.type.startsWith('tool-')).length;
        tally.expect(
          filtered.report.closedToolCalls.length === dangling,
          'the filter did not close the dangling tool call',
          () => JSON.stringify(filtered.report.closedToolCalls),
        );
        const engine = createContextEngine({ store: store.contextStore(thread.id), profile });
        const { messages } = await engine.buildInitialContext({ instructions: 'You are a weather assistant.' });
        tally.attempt('context:next-turn-built');
        const unpaired = unpairedToolParts(messages);
        tally.expect(
          unpaired.callsWithoutResult.length === 0 && unpaired.resultsWithoutCall.length === 0,
          'the next context has an unpaired tool call',
          () => JSON.stringify(unpaired),
        );
        const last = messages.at(-1);
        tally.expect(
          last?.role === 'user' && JSON.stringify(last.content).includes('Are you still there?'),
          'the newest user input is not last in the context',
          () => JSON.stringify(last),
        );
        if (dangling > 0) {
          // Closed, not dropped: the call is there with an explicit error result.
          const text = JSON.stringify(messages);
          tally.expect(
            text.includes('"tool-call"') && text.includes('"tool-result"') && text.includes(`call-${messageId}`),
            'the dangling tool call was dropped instead of closed',
            () => text.slice(0, 300),
          );
        }
        if (checkpoints > 0) {
          tally.expect(
            JSON.stringify(messages).includes('Let me check'),
            'the partial answer is missing from the next context',
            () => JSON.stringify(messages).slice(0, 200),
          );
        }
      }
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    60_000 + CRASHES * MS_PER_CRASH,
  );
});
