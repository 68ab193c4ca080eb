import type { TenantHistory } from '../../../src/store/create-agent-history.js';
import type { SeededRandom } from './seeded-random.js';

/** One stored message of a fixture. */
export interface FixtureMessage {
  threadId: string;
  messageId: string;
  rowId: string;
  sequence: number;
}

/** What {@link seedTenant} wrote: a bit of everything the store can hold, all marked with the tenant's canary word. */
export interface TenantFixture {
  tenantId: string;
  /** A word that appears in this tenant's titles, metadata, texts, tool outputs and summaries, and nowhere else. */
  canary: string;
  /** Live threads. */
  threadIds: string[];
  softDeletedThreadId: string;
  messages: FixtureMessage[];
  /** An assistant message left `streaming` (its writer is "still running"). */
  streaming: FixtureMessage;
  runIds: string[];
  summaryIds: string[];
  snapshotIds: string[];
}

/** The user id every seeded tenant uses, so a `userId` filter alone would find other tenants' threads. */
export const SHARED_USER_ID = 'user-shared';
/** The tool call of the file every seeded tenant's streaming answer read: a payload over the message limit. */
export const FILE_CALL_ID = 'call-file';
/** A word every seeded tenant's messages contain, so a search for it returns hits in every tenant. */
export const SHARED_WORD = 'orchid';

/** A deterministic embedder for the seeded recall entries: each text's length and its count of the shared word. */
export const SEED_EMBEDDER = {
  modelId: 'seed-embedder',
  embed: async (texts: string[]) => texts.map((value) => [value.length, value.split(SHARED_WORD).length]),
};

/**
 * Fills one tenant through the store API: a conversation with a run, a tool round trip, an excluded, a pinned
 * and a span-redacted message, a summary and a snapshot; a thread with a streaming assistant message holding a
 * dangling tool call and a tool output kept in `agent_tool_payload`; a soft-deleted thread.
 */
export async function seedTenant(store: TenantHistory, random: SeededRandom): Promise<TenantFixture> {
  const canary = `cnry${random.word(10)}`;
  const messages: FixtureMessage[] = [];
  const append = async (
    threadId: string,
    message: Parameters<TenantHistory['appendMessage']>[1],
    options?: Parameters<TenantHistory['appendMessage']>[2],
  ) => {
    const { stored } = await store.appendMessage(threadId, message, options);
    const fixture = { threadId, messageId: stored.message.id, rowId: stored.rowId, sequence: stored.sequence };
    messages.push(fixture);
    return fixture;
  };
  const text = (value: string) => [{ type: 'text', text: value }];

  const main = await store.createThread({
    userId: SHARED_USER_ID,
    title: `Trip ${canary}`,
    metadata: { canary, tags: [SHARED_WORD] },
  });
  const run = await store.startRun(main.id, { provider: 'mock', model: 'mock-1', metadata: { canary } });
  await append(main.id, {
    id: `${canary}-u1`,
    role: 'user',
    parts: text(`${SHARED_WORD} weather in Paris ${canary}?`),
    metadata: { canary },
  });
  await append(
    main.id,
    {
      id: `${canary}-a1`,
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-weather',
          toolCallId: `${canary}-call-1`,
          state: 'output-available',
          input: { city: 'Paris' },
          output: { note: canary, tempC: 18 },
        },
        { type: 'step-start' },
        { type: 'text', text: `${SHARED_WORD} it is 18C ${canary}`, state: 'done' },
      ],
    },
    { runId: run.id, clientRequestId: `${canary}-req-a1` },
  );
  const secretMessage = await append(main.id, {
    id: `${canary}-u2`,
    role: 'user',
    parts: text(`my password is hunter2${canary} ${SHARED_WORD}`),
  });
  await append(main.id, { id: `${canary}-a2`, role: 'assistant', parts: text(`noted ${canary}`) }, { runId: run.id });
  const excluded = await append(main.id, { id: `${canary}-u3`, role: 'user', parts: text(`off topic ${canary}`) });
  const pinned = await append(
    main.id,
    { id: `${canary}-a3`, role: 'assistant', parts: text(`pinned fact ${canary}`) },
    { pinned: false },
  );
  await store.finishRun(run.id, { status: 'completed', usage: { inputTokens: 10, outputTokens: 5 } });
  await store.excludeMessages(main.id, [excluded.messageId], { reason: 'off-topic', actor: 'seed' });
  await store.pinMessage(main.id, pinned.messageId);
  const summary = await store.writeSummary(main.id, {
    fromSequence: 1,
    throughSequence: 2,
    content: `The user asked about Paris ${canary}.`,
    tokenCount: 9,
    policyVersion: 'reliability-1',
  });
  const snapshot = await store.writeSnapshot(main.id, {
    expectedVersion: 0,
    throughSequence: 2,
    summaryId: summary.id,
    includedSequences: [3, 4, 6],
    pruned: [{ sequence: 1, reason: 'summarized' }],
    budget: { available: 1000 },
    policyVersion: 'reliability-1',
    messagesHash: `hash-${canary}`,
  });
  await store.redactMessage(main.id, secretMessage.messageId, {
    spans: [`hunter2${canary}`],
    actor: 'seed',
    reason: 'secret',
  });

  const live = await store.createThread({ userId: SHARED_USER_ID, title: `Live ${canary}` });
  await append(live.id, { id: `${canary}-l1`, role: 'user', parts: text(`search the web ${canary}`) });
  const begun = await store.beginAssistantMessage(live.id, { messageId: `${canary}-l2` });
  const checkpointed = await store.checkpointMessage(live.id, `${canary}-l2`, {
    parts: [
      { type: 'step-start' },
      { type: 'text', text: `looking ${canary}`, state: 'done' },
      { type: 'tool-search', toolCallId: `${canary}-call-2`, state: 'input-available', input: { query: canary } },
      // Over maxMessageBytes: kept whole in agent_tool_payload, a preview in the part.
      {
        type: 'tool-readFile',
        toolCallId: FILE_CALL_ID,
        state: 'output-available',
        input: { path: 'notes.txt' },
        output: `${canary} ${'f'.repeat(1_100_000)} ${canary}`,
      },
    ],
  });
  const streaming = {
    threadId: live.id,
    messageId: checkpointed.message.id,
    rowId: begun.stored.rowId,
    sequence: begun.stored.sequence,
  };
  messages.push(streaming);

  const gone = await store.createThread({ userId: SHARED_USER_ID, title: `Gone ${canary}` });
  await append(gone.id, { id: `${canary}-g1`, role: 'user', parts: text(`${SHARED_WORD} forget me ${canary}`) });

  // Memory: a thread's working memory and the recall entries of every message (embedded).
  await store.updateWorkingMemory({
    scope: 'thread',
    threadId: main.id,
    content: `plan ${canary}`,
    expectedVersion: 0,
  });
  await store.embedPendingMemory({ embedder: SEED_EMBEDDER });
  await store.softDeleteThread(gone.id, { actor: 'seed', reason: 'user deleted' });

  return {
    tenantId: store.tenantId,
    canary,
    threadIds: [main.id, live.id],
    softDeletedThreadId: gone.id,
    messages,
    streaming,
    runIds: [run.id],
    summaryIds: [summary.id],
    snapshotIds: [snapshot.id],
  };
}
