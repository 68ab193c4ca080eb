import { streamText, type UIMessageChunk } from 'ai';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resumeChatStream, streamChatTurn, RESUME_GAP_ERROR } from '../../../src/ai-sdk/index.js';
import { createAgentHistory } from '../../../src/index.js';
import { BACKENDS, useTestDatabase } from '../../support/test-database.js';
import { userMessage } from '../../support/fixtures.js';
import { gatedStream, newThread, scriptedModel, textStep, type ChatMessage } from '../fixtures.js';

type Step = Parameters<typeof scriptedModel>[0][number];

/** A `streamText` source over one scripted step, `chunkDelayInMs` apart. */
const slowSource = (step: Step, chunkDelayInMs = 0) => ({
  streamText: ({ messages, abortSignal }: { messages: never; abortSignal?: AbortSignal }) =>
    streamText({ model: scriptedModel([step], { chunkDelayInMs }), messages, abortSignal }),
});

/** Every chunk of a stream, as the wire carries it (JSON). */
async function readAll(stream: ReadableStream<unknown>): Promise<unknown[]> {
  const chunks: unknown[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<unknown>) chunks.push(JSON.parse(JSON.stringify(chunk)));
  return chunks;
}

/** Reads at most `count` chunks, then disconnects (cancels the stream). */
async function readSome(stream: ReadableStream<UIMessageChunk>, count: number): Promise<unknown[]> {
  const reader = stream.getReader();
  const chunks: unknown[] = [];
  while (chunks.length < count) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
  await reader.cancel();
  return chunks;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)('resumeChatStream on %s', (backend) => {
  const database = useTestDatabase(backend);

  it('should give a client that disconnects and resumes at random points every chunk exactly once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.string({ minLength: 1, maxLength: 12 }).filter((word) => !word.includes('\u0000')),
          {
            minLength: 1,
            maxLength: 25,
          },
        ),
        fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 6, maxLength: 6 }),
        fc.record({
          flushMs: fc.integer({ min: 0, max: 25 }),
          chunkDelayInMs: fc.integer({ min: 0, max: 4 }),
          notifications: fc.constantFrom('listen' as const, 'poll' as const),
        }),
        async (words, disconnectAfter, pauses, { flushMs, chunkDelayInMs, notifications }) => {
          const { history, threadId } = await newThread(database);
          const turn = await streamChatTurn<ChatMessage>({
            history,
            threadId,
            message: userMessage('u-1', 'Tell me'),
            model: slowSource(textStep(words.join(' ')), chunkDelayInMs) as never,
            resumable: { flushMs, retainMs: 60_000 },
          });
          const original = readAll(turn.stream);
          // Another store instance, as another request would have.
          const reader = createAgentHistory({ db: database.db }).forTenant(history.tenantId);
          const options = { history: reader, threadId, messageId: turn.assistantMessageId, notifications, pollMs: 20 };
          const seen: unknown[] = [];
          for (const [index, count] of disconnectAfter.entries()) {
            const resumed = await resumeChatStream({ ...options, fromChunk: seen.length });
            seen.push(...(await readSome(resumed!.stream, count)));
            await pause(pauses[index]!);
          }
          const last = await resumeChatStream({ ...options, fromChunk: seen.length });
          seen.push(...(await readAll(last!.stream)));
          await turn.done;
          expect(seen).toEqual(await original);
          expect(JSON.stringify(seen)).toBe(JSON.stringify(await original));
        },
      ),
      { numRuns: backend === 'pglite' ? 12 : 20 },
    );
  });

  it('should replay the answer in progress from its start, wait for the rest, and answer null when nothing streams', async () => {
    const { history, threadId } = await newThread(database);
    expect(await resumeChatStream({ history, threadId })).toBeNull();
    const gated = gatedStream(textStep('Half of it').slice(0, 3), textStep('Half of it').slice(3));
    const turn = await streamChatTurn<ChatMessage>({
      history,
      threadId,
      message: userMessage('u-1', 'Tell me'),
      model: slowSource(gated.stream) as never,
      resumable: { flushMs: 5 },
    });
    const original = readAll(turn.stream);
    const resumed = await resumeChatStream({ history, threadId });
    expect(resumed?.messageId).toBe(turn.assistantMessageId);
    const replay = readAll(resumed!.stream);
    gated.release();
    await turn.done;
    expect(await replay).toEqual(await original);
    expect(await resumeChatStream({ history, threadId })).toBeNull();
  });

  it('should end with an error chunk, never a silent gap, when the log is deleted under a reader', async () => {
    const { history, threadId } = await newThread(database);
    const gated = gatedStream(textStep('one two three').slice(0, 3), textStep('one two three').slice(3));
    const turn = await streamChatTurn<ChatMessage>({
      history,
      threadId,
      message: userMessage('u-1', 'Tell me'),
      model: slowSource(gated.stream) as never,
      resumable: { flushMs: 0 },
    });
    const original = readAll(turn.stream);
    const resumed = await resumeChatStream({ history, threadId, pollMs: 10, notifications: 'poll' });
    const first = await readSome(resumed!.stream, 1);
    expect(first).toEqual([{ type: 'start', messageId: turn.assistantMessageId }]);
    await history.deleteStreamChunks(threadId, { messageId: turn.assistantMessageId });
    gated.release();
    await turn.done;
    await original;
    const rest = await readAll(
      (await resumeChatStream({ history, threadId, messageId: turn.assistantMessageId, fromChunk: 1 }))!.stream,
    );
    // The final batch (written after the deletion) is there, the ones before it are not: the reader says so.
    expect(rest).toEqual([{ type: 'error', errorText: RESUME_GAP_ERROR }]);
  });

  it('should delete a finished answer’s log after retainMs, and a redaction deletes it at once', async () => {
    const { history, threadId } = await newThread(database);
    const turn = await streamChatTurn<ChatMessage>({
      history,
      threadId,
      message: userMessage('u-1', 'Tell me'),
      model: slowSource(textStep('secret words here')) as never,
      resumable: { flushMs: 0, retainMs: 50 },
    });
    await readAll(turn.stream);
    await turn.done;
    const count = async () =>
      Number(
        (
          await database.admin.query<{ count: string }>(
            'select count(*) from agent_stream_chunk where thread_id = $1',
            [threadId],
          )
        )[0]!.count,
      );
    await expect.poll(count, { interval: 20 }).toBe(0);

    const gated = gatedStream(textStep('my password is hunter2').slice(0, 5), textStep('x').slice(3));
    const second = await streamChatTurn<ChatMessage>({
      history,
      threadId,
      message: userMessage('u-2', 'Again'),
      model: slowSource(gated.stream) as never,
      resumable: { flushMs: 0, retainMs: 60_000 },
    });
    const reading = readAll(second.stream);
    await expect.poll(count, { interval: 20 }).toBeGreaterThan(0);
    await history.redactMessage(threadId, second.assistantMessageId, { actor: 'test', reason: 'secret' });
    expect(await count()).toBe(0);
    gated.release();
    await reading;
    await second.done.catch(() => {});
    // The redacted answer takes no more content, and its run ends failed rather than staying running.
    expect(await history.getRun(second.runId)).toMatchObject({
      status: 'failed',
      error: { message: 'The answer was redacted while it was being written.' },
    });
  });

  it('should notify a subscriber of this message only, through LISTEN on this driver', async () => {
    const { history, threadId } = await newThread(database);
    await history.beginAssistantMessage(threadId, { messageId: 'a-1' });
    await history.beginAssistantMessage(threadId, { messageId: 'a-2' });
    const woken: string[] = [];
    const stop = await history.subscribeStreamChunks(threadId, 'a-1', () => woken.push('a-1'));
    expect(stop).toBeTypeOf('function');
    await history.appendStreamChunks(threadId, 'a-2', { batch: 0, chunks: [{ type: 'start' }] });
    await history.appendStreamChunks(threadId, 'a-1', { batch: 0, chunks: [{ type: 'start' }] });
    await expect.poll(() => woken, { interval: 10 }).toEqual(['a-1']);
    stop!();
    await history.appendStreamChunks(threadId, 'a-1', { batch: 1, chunks: [], final: true });
    expect(await history.readStreamChunks(threadId, 'a-1')).toEqual({
      status: 'pending',
      batches: [
        { batch: 0, chunks: [{ type: 'start' }], final: false },
        { batch: 1, chunks: [], final: true },
      ],
    });
  });

  it('should stop reading the log when the client disconnects', async () => {
    const { history, threadId } = await newThread(database);
    const gated = gatedStream(textStep('one two three').slice(0, 3), textStep('one two three').slice(3));
    const turn = await streamChatTurn<ChatMessage>({
      history,
      threadId,
      message: userMessage('u-1', 'Tell me'),
      model: slowSource(gated.stream) as never,
      resumable: { flushMs: 0 },
    });
    const original = readAll(turn.stream);
    let reads = 0;
    const counting = {
      ...history,
      readStreamChunks: (...args: Parameters<typeof history.readStreamChunks>) => {
        reads++;
        return history.readStreamChunks(...args);
      },
    };
    const resumed = await resumeChatStream({ history: counting, threadId, notifications: 'poll', pollMs: 5 });
    // Read everything there is, until the replay waits for more; then go away.
    const reader = resumed!.stream.getReader();
    const reading = (async () => {
      while (!(await reader.read()).done);
    })();
    await expect.poll(() => reads, { interval: 5 }).toBeGreaterThan(3);
    await reader.cancel();
    await reading;
    const afterDisconnect = reads;
    await pause(150);
    expect(reads - afterDisconnect).toBeLessThanOrEqual(1); // at most the read in flight when it went away
    gated.release();
    await original;
    await turn.done;
  });

  it('should keep each tenant’s chunk log to itself (row-level security, as the app login)', async () => {
    const { history, threadId } = await newThread(database);
    await history.beginAssistantMessage(threadId, { messageId: 'a-1' });
    await history.appendStreamChunks(threadId, 'a-1', { batch: 0, chunks: [{ type: 'start' }] });
    const intruder = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    await expect(intruder.readStreamChunks(threadId, 'a-1')).rejects.toMatchObject({ code: 'message-not-found' });
    await expect(
      intruder.appendStreamChunks(threadId, 'a-1', { batch: 1, chunks: [{ type: 'injected' }] }),
    ).rejects.toMatchObject({ code: 'message-not-found' });
    expect(await intruder.deleteStreamChunks(threadId, { messageId: 'a-1' })).toBe(0);
    expect(await intruder.deleteStreamChunks(threadId)).toBe(0);
    await expect(resumeChatStream({ history: intruder, threadId })).rejects.toMatchObject({ code: 'thread-not-found' });
    // Past the store: the policy alone hides the rows from another tenant's transaction.
    const visible = await database.db.transaction(async (tx) => {
      await tx.execute(sql`select set_config('app.tenant_id', ${intruder.tenantId}, true)`);
      await tx.execute(sql`set local role agent_history_app`);
      return tx.execute(sql`select count(*)::int as count from agent_stream_chunk`);
    });
    const rows = Array.isArray(visible) ? visible : (visible as { rows: unknown[] }).rows;
    expect(rows).toEqual([{ count: 0 }]);
    expect((await history.readStreamChunks(threadId, 'a-1')).batches).toEqual([
      { batch: 0, chunks: [{ type: 'start' }], final: false },
    ]);
  });

  it('should refuse bad input with a typed error naming it', async () => {
    const { history, threadId } = await newThread(database);
    await expect(resumeChatStream({ history, threadId, fromChunk: -1 })).rejects.toThrow(/fromChunk.*-1|-1.*fromChunk/);
    await expect(history.appendStreamChunks(threadId, 'missing', { batch: 0, chunks: [] })).rejects.toMatchObject({
      code: 'message-not-found',
    });
    await expect(history.appendStreamChunks(threadId, 'missing', { batch: -1, chunks: [] })).rejects.toMatchObject({
      code: 'argument-invalid',
    });
  });
});
