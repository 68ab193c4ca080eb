import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  createAgentHistory,
  NotFoundError,
  storedPreviewMarker,
  TOOL_PAYLOAD_REFERENCE,
  type TenantHistory,
} from '../../src/index.js';
import { chunkText, PAYLOAD_CHUNK_CHARACTERS } from '../../src/store/tool-payload-rows.js';
import { BACKENDS, useTestDatabase } from '../support/test-database.js';

setFlagsFromString('--expose-gc');
/** V8's collector, for measuring what a read keeps alive rather than what it left for the next collection. */
const collect = runInNewContext('gc') as () => void;

const MB = 1_000_000;
const SECRET = 'zqpayloadsecret';

/**
 * A tool output of about `bytes` as JSON: text with emoji (surrogate pairs) and escapes throughout, a secret at
 * the start (in the preview) and one cut in two by the first chunk boundary, so that neither a chunk nor a preview
 * can be checked on its own.
 */
function bigOutput(bytes: number): { lines: string[]; note: string } {
  const boundary = PAYLOAD_CHUNK_CHARACTERS - 30;
  const head = `{"lines":["${SECRET} `.length;
  const lines = [`${SECRET} ${'a'.repeat(boundary - head - 8)}${SECRET}`];
  for (let size = lines[0]!.length; size < bytes; size += 80)
    lines.push(`line ${size} "quoted" \\ 😀 ${'é'.repeat(50)}`);
  return { lines, note: 'end' };
}

const toolPart = (output: unknown) => ({
  type: 'tool-readFile',
  toolCallId: 'call-1',
  state: 'output-available',
  input: { path: '/data/big.json' },
  output,
});

/** Begins, checkpoints twice (the second a retry) and finalizes twice (a retried `onEnd`) an answer with `output`. */
async function appendAnswer(store: TenantHistory, threadId: string, output: unknown) {
  await store.appendMessage(threadId, { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'Read it' }] });
  await store.beginAssistantMessage(threadId, { messageId: 'a-1' });
  const parts = [{ type: 'step-start' }, toolPart(output)];
  await store.checkpointMessage(threadId, 'a-1', { parts });
  await store.checkpointMessage(threadId, 'a-1', { parts });
  const final = [...parts, { type: 'text', text: 'Done.', state: 'done' }];
  await store.finalizeMessage(threadId, 'a-1', { status: 'completed', parts: final });
  return store.finalizeMessage(threadId, 'a-1', { status: 'completed', parts: final });
}

/** The whole payload streamed back, and the most the heap grew (after collection) while it streamed. */
async function streamBack(store: TenantHistory, threadId: string) {
  // Before the call: a stream that read the payload up front would show it here.
  collect();
  const baseline = process.memoryUsage().heapUsed;
  const { stream, byteSize, chunkCount } = await store.streamToolPayload(threadId, 'a-1', { toolCallId: 'call-1' });
  let peak = 0;
  const chunks: string[] = [];
  let index = 0;
  for await (const chunk of stream) {
    // Kept as lengths only: the test must not hold the payload, or it would measure itself.
    chunks.push(chunk.length === 0 ? '' : chunk.slice(0, 1) + String(chunk.length));
    if (index++ % 8 === 0) {
      collect();
      peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
    }
  }
  return { byteSize, chunkCount, chunks: chunks.length, peak };
}

/** How many payload rows there are, and how many whole payloads (chunks joined) hold the secret. */
async function payloadRows(database: { admin: { query: <ROW>(text: string, params?: unknown[]) => Promise<ROW[]> } }) {
  const [{ rows }] = await database.admin.query<{ rows: number }>(
    'select count(*)::int as rows from agent_tool_payload',
  );
  // Grouped by the distribution column too, so that Citus runs it on the shards.
  const [{ whole }] = await database.admin.query<{ whole: number }>(
    `select count(*)::int as whole from (select string_agg(content, '' order by chunk) as json from agent_tool_payload
       group by tenant_id, message_id, part, field) p where strpos(p.json, $1) > 0`,
    [SECRET],
  );
  return { rows, whole };
}

describe('chunkText', () => {
  it('should cut any text into chunks that join back to it, never cutting a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.oneof(fc.constant('😀'), fc.constant('é'), fc.constant('a'), fc.constant('\\u0000')) }),
        fc.integer({ min: 1, max: 9 }),
        (text, size) => {
          const chunks = chunkText(text, size);
          expect(chunks.join('')).toBe(text);
          for (const chunk of chunks) {
            expect(chunk.isWellFormed()).toBe(true);
            expect(chunk.length).toBeLessThanOrEqual(Math.max(size, 2));
            if (text.length > 0) expect(chunk.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe.each(BACKENDS)('tool payloads larger than maxMessageBytes on %s', (backend) => {
  const database = useTestDatabase(backend, { poolSize: 2 });

  it.each([5, 50])(
    'should keep a %d MB tool output whole: read back byte-identical, streamed in bounded memory, forked, redacted, deleted',
    async (megabytes) => {
      const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
      const thread = await store.createThread();
      const output = bigOutput(megabytes * MB);
      const json = JSON.stringify(output);
      expect(Buffer.byteLength(json)).toBeGreaterThan(megabytes * MB);

      const times: string[] = [];
      let started = performance.now();
      const lap = (step: string) => {
        times.push(`${step} ${((performance.now() - started) / 1000).toFixed(1)} s`);
        started = performance.now();
      };
      const stored = await appendAnswer(store, thread.id, output);
      lap('append (2 checkpoints, 2 finalizes)');
      const preview = stored.message.parts[1]!.output as string;
      expect(preview.startsWith(storedPreviewMarker)).toBe(true);
      expect(preview).toContain(`the whole output is kept as "${TOOL_PAYLOAD_REFERENCE}"]\n${json.slice(0, 100)}`);
      expect(stored.byteSize).toBeLessThan(1_048_576);
      const chunkCount = Math.ceil(json.length / PAYLOAD_CHUNK_CHARACTERS);
      // Written once, whatever the retries: one row per chunk.
      expect(await payloadRows(database)).toMatchObject({ whole: 1 });
      const [{ count }] = (await database.admin.query(
        'select count(*)::int as count from agent_tool_payload where tenant_id = $1',
        [store.tenantId],
      )) as [{ count: number }];
      expect(count).toBeGreaterThanOrEqual(chunkCount);

      // The model's view and the default read keep the preview; asked for, the payload comes back whole.
      expect((await store.getMessage(thread.id, 'a-1')).message.parts[1]!.output).toBe(preview);
      const whole = await store.getMessage(thread.id, 'a-1', { include: 'payloads' });
      lap('getMessage with payloads');
      expect(JSON.stringify(whole.message.parts[1]!.output) === json).toBe(true);
      const page = await store.listMessages(thread.id, { include: 'payloads' });
      expect(JSON.stringify(page.messages[0]!.message.parts[1]!.output) === json).toBe(true);
      expect(page.messages[0]!.message.parts[2]).toEqual({ type: 'text', text: 'Done.', state: 'done' });

      const streamed = await streamBack(store, thread.id);
      lap('stream (gc every 8 chunks)');
      expect(streamed).toMatchObject({ byteSize: Buffer.byteLength(json), chunks: streamed.chunkCount });
      // At most a few chunks alive at a time (a chunk is at most 0.5 MB as a V8 string), for 5 MB as for 50 MB.
      expect(streamed.peak).toBeLessThan(8 * 1_048_576);
      const joined: string[] = [];
      for await (const chunk of (await store.streamToolPayload(thread.id, 'a-1', { toolCallId: 'call-1' })).stream)
        joined.push(chunk);
      expect(joined.join('') === json).toBe(true);

      const fork = await store.forkThread(thread.id, { atSequence: 2 });
      lap('fork');
      const forked = await store.getMessage(fork.id, 'a-1', { include: 'payloads' });
      expect(JSON.stringify(forked.message.parts[1]!.output) === json).toBe(true);

      await store.redactMessage(fork.id, 'a-1', { actor: 'dpo', reason: 'leaked' });
      lap('redact (whole message, both copies)');
      expect(await payloadRows(database)).toEqual({ rows: 0, whole: 0 });
      await expect(store.streamToolPayload(thread.id, 'a-1', { toolCallId: 'call-1' })).rejects.toBeInstanceOf(
        NotFoundError,
      );
      expect(JSON.stringify(await store.listMessages(thread.id, { include: 'payloads' }))).not.toContain(SECRET);
      await store.deleteThread(thread.id);
      await store.deleteThread(fork.id);
      const heap = `heap grew at most ${(streamed.peak / 1_048_576).toFixed(1)} MiB while streaming`;
      console.info(`${backend}, ${megabytes} MB payload, ${streamed.chunkCount} chunks: ${heap}; ${times.join(', ')}`);
    },
    600_000,
  );

  it('should scrub spans in a payload whole, a span cut by a chunk boundary too, and write a new preview', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    const output = bigOutput(2 * MB);
    await appendAnswer(store, thread.id, output);
    const fork = await store.forkThread(thread.id, { atSequence: 2 });
    const redacted = await store.redactMessage(thread.id, 'a-1', { spans: [SECRET], actor: 'dpo', reason: 'leaked' });

    const expected = JSON.stringify(output).replaceAll(SECRET, '[redacted]');
    expect(redacted.message.parts[1]!.output).toContain(`]\n${expected.slice(0, 100)}`);
    for (const threadId of [thread.id, fork.id]) {
      const whole = await store.getMessage(threadId, 'a-1', { include: 'payloads' });
      expect(JSON.stringify(whole.message.parts[1]!.output) === expected).toBe(true);
    }
    const scan = await payloadRows(database);
    expect(scan.whole).toBe(0);
    expect(scan.rows).toBeGreaterThan(0);
  });

  it('should end a stream with NotFoundError when a redaction rewrites or deletes the payload under it', async () => {
    const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
    const thread = await store.createThread();
    await appendAnswer(store, thread.id, bigOutput(2 * MB));
    const fork = await store.forkThread(thread.id, { atSequence: 2 });
    for (const [threadId, spans] of [
      [thread.id, [SECRET]],
      [fork.id, undefined],
    ] as const) {
      const { stream, chunkCount } = await store.streamToolPayload(threadId, 'a-1', { toolCallId: 'call-1' });
      expect(chunkCount).toBeGreaterThan(2);
      const reader = stream.getReader();
      const first = await reader.read();
      expect(first.value!.startsWith('{"lines":["')).toBe(true);
      // A second writer: the span redaction writes another payload (another digest), the whole one deletes it.
      await store.redactMessage(threadId, 'a-1', { spans: spans as string[] | undefined, actor: 'dpo', reason: 'x' });
      const rest = async () => {
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
      };
      await expect(rest()).rejects.toMatchObject({ name: 'NotFoundError', entity: 'tool-payload' });
    }
  });

  it("should keep a fork's payload when its source thread is deleted, and delete it with the fork by retention", async () => {
    const store = createAgentHistory({ db: database.db, maxMessageBytes: 4096 }).forTenant(randomUUID());
    const thread = await store.createThread();
    const output = { text: `${SECRET} ${'w'.repeat(20_000)}` };
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: [toolPart(output)] });
    const fork = await store.forkThread(thread.id, { atSequence: 1 });
    const rowsOf = async (threadId: string) =>
      (
        await database.admin.query<{ count: number }>(
          'select count(*)::int as count from agent_tool_payload where tenant_id = $1 and thread_id = $2',
          [store.tenantId, threadId],
        )
      )[0]!.count;
    expect([await rowsOf(thread.id), await rowsOf(fork.id)]).toEqual([1, 1]);

    await store.deleteThread(thread.id);
    expect(await rowsOf(thread.id)).toBe(0);
    const forked = await store.getMessage(fork.id, 'a-1', { include: 'payloads' });
    expect(forked.message.parts[0]!.output).toEqual(output);

    expect(await store.deleteThreadsOlderThan({ olderThan: new Date(Date.now() + 60_000) })).toBe(1);
    expect(await rowsOf(fork.id)).toBe(0);
  });

  it('should delete a payload when its part no longer needs one, and keep it when the part is sent back as read', async () => {
    const store = createAgentHistory({ db: database.db, maxMessageBytes: 4096 }).forTenant(randomUUID());
    const thread = await store.createThread();
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    const big = { text: 'y'.repeat(10_000) };
    const checkpointed = await store.checkpointMessage(thread.id, 'a-1', { parts: [toolPart(big)] });
    const count = async () =>
      (
        await database.admin.query<{ count: number }>(
          'select count(*)::int as count from agent_tool_payload where tenant_id = $1',
          [store.tenantId],
        )
      )[0]!.count;
    expect(await count()).toBe(1);
    // The parts as read (the preview in place): nothing to write, nothing to delete.
    await store.checkpointMessage(thread.id, 'a-1', { parts: checkpointed.message.parts });
    expect(await count()).toBe(1);
    expect((await store.getMessage(thread.id, 'a-1', { include: 'payloads' })).message.parts[0]!.output).toEqual(big);
    // A small output in its place: the payload goes.
    await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: [toolPart({ text: 'small' })] });
    expect(await count()).toBe(0);
  });

  it('should refuse a bad include, tool call id or field with a typed error, and a foreign payload as not found', async () => {
    const history = createAgentHistory({ db: database.db, maxMessageBytes: 4096 });
    const store = history.forTenant(randomUUID());
    const thread = await store.createThread({ userId: 'alice' });
    await store.beginAssistantMessage(thread.id, { messageId: 'a-1' });
    await store.finalizeMessage(thread.id, 'a-1', { status: 'completed', parts: [toolPart('z'.repeat(10_000))] });
    await expect(store.getMessage(thread.id, 'a-1', { include: 'everything' as never })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      argument: 'options.include',
    });
    await expect(store.listMessages(thread.id, { include: ['payloads'] as never })).rejects.toMatchObject({
      argument: 'options.include',
    });
    await expect(store.streamToolPayload(thread.id, 'a-1', { toolCallId: '' })).rejects.toMatchObject({
      argument: 'options.toolCallId',
    });
    await expect(
      store.streamToolPayload(thread.id, 'a-1', { toolCallId: 'call-1', field: 'parts' as never }),
    ).rejects.toMatchObject({ argument: 'options.field' });
    await expect(store.streamToolPayload(thread.id, 'a-1', { toolCallId: 'call-2' })).rejects.toMatchObject({
      name: 'NotFoundError',
      entity: 'tool-payload',
    });
    const bob = history.forTenant(store.tenantId, { userId: 'bob' });
    const stranger = history.forTenant(randomUUID());
    for (const other of [bob, stranger])
      await expect(other.streamToolPayload(thread.id, 'a-1', { toolCallId: 'call-1' })).rejects.toMatchObject({
        name: 'NotFoundError',
        entity: 'thread',
      });
    const alice = history.forTenant(store.tenantId, { userId: 'alice' });
    const { stream } = await alice.streamToolPayload(thread.id, 'a-1', { toolCallId: 'call-1' });
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(JSON.parse(chunks.join(''))).toBe('z'.repeat(10_000));
  });
});
