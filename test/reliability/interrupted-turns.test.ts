import { randomUUID } from 'node:crypto';
import { stepCountIs, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { createChatHandler, createContextManager } from '../../src/ai-sdk/index.js';
import { createContextEngine } from '../../src/context/engine/context-engine.js';
import type { ContextSummarizer } from '../../src/context/contracts/context-summarizer.js';
import { resolveModelProfile } from '../../src/tokens/model-profile.js';
import { AgentHistoryError, createAgentHistory, type TenantHistory } from '../../src/index.js';
import {
  gatedStream,
  post,
  schemas,
  scriptedModel,
  textStep,
  tools,
  usage,
  type ChatMessage,
} from '../ai-sdk/fixtures.js';
import { userMessage } from '../support/fixtures.js';
import { useTestDatabase } from '../support/test-database.js';
import { SETTLE_TIMEOUT_MS } from '../support/time-limits.js';
import { ReliabilityTally, seededTally } from './support/reliability-report.js';
import { scaled, scaledTimeout } from './support/reliability-scale.js';
import { seededRandom } from './support/seeded-random.js';
import { unpairedToolParts } from './support/tool-pairing.js';

const ABORTED_TURNS = scaled(60);
const SUMMARIZER_ROUNDS = scaled(5);

/** A language-model stream part, as the scripted mock model takes them. */
type StreamPart = { type: string; [key: string]: unknown };

/** Step 1 says a few words and calls the weather tool (its input streamed in two deltas); step 2 answers. */
const toolStep = (callId: string): StreamPart[] =>
  [
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: 'Let me ' },
    { type: 'text-delta', id: 't1', delta: 'check. ' },
    { type: 'text-end', id: 't1' },
    { type: 'tool-input-start', id: callId, toolName: 'weather' },
    { type: 'tool-input-delta', id: callId, delta: '{"city":' },
    { type: 'tool-input-delta', id: callId, delta: '"Paris"}' },
    { type: 'tool-input-end', id: callId },
    { type: 'tool-call', toolCallId: callId, toolName: 'weather', input: '{"city":"Paris"}' },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: usage(20, 8) },
  ] as StreamPart[];
const ANSWER = 'Paris is 18C today.';
const isDelta = (part: StreamPart) => part.type === 'text-delta' || part.type === 'tool-input-delta';

/** Reads a UI message stream response (server-sent events) chunk by chunk, so the test can stop reading anywhere. */
function sseReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const pending: Array<{ type: string; delta?: string }> = [];
  return {
    async next(): Promise<{ type: string; delta?: string } | undefined> {
      while (pending.length === 0) {
        const { done, value } = await reader.read();
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true });
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) if (line.startsWith('data: {')) pending.push(JSON.parse(line.slice(6)));
      }
      return pending.shift();
    },
    cancel: () => reader.cancel(),
  };
}

/** Polls until `read` returns a value (the server settles the answer after the client is gone). */
async function eventually<VALUE>(
  read: () => Promise<VALUE | undefined>,
  timeoutMs = SETTLE_TIMEOUT_MS,
): Promise<VALUE | undefined> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (value !== undefined || Date.now() - started > timeoutMs) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('interrupted turns on postgres', () => {
  const database = useTestDatabase('postgres', { poolSize: 6 });

  const handlerFor = (
    history: TenantHistory,
    model: ReturnType<typeof scriptedModel>,
    onDisconnect: 'cancel' | 'continue',
    ids: () => string,
  ) =>
    createChatHandler<ChatMessage, typeof tools>({
      getHistory: () => history,
      ...schemas,
      generateMessageId: ids,
      onDisconnect,
      model: {
        streamText: ({ messages, abortSignal, prepareStep }) =>
          streamText({
            model,
            messages,
            abortSignal,
            tools,
            prepareStep: prepareStep as never,
            stopWhen: stepCountIs(5),
          }),
      },
      contextManager: ({ history: store, threadId }) =>
        createContextManager({ store: store.contextStore(threadId), model: 'gpt-4o', tools }),
    });

  it(
    'should keep what the client saw when it disconnects or stops at a random point, and send the next turn a well-formed context',
    async () => {
      const { random, tally } = seededTally('faults-client-abort-postgres');
      for (let round = 0; round < ABORTED_TURNS; round++) {
        const history = createAgentHistory({ db: database.db }).forTenant(randomUUID());
        const thread = await history.createThread({ title: 'Weather' });
        let ids = 0;
        const nextId = () => `a-${round}-${++ids}`;
        const mode = random.pick(['disconnect-cancel', 'stop-route', 'disconnect-continue'] as const);
        const inSecondStep = random.chance(0.4);
        const first = toolStep(`call-${round}`);
        const cutStep = inSecondStep ? (textStep(ANSWER) as StreamPart[]) : first;
        const deltaIndexes = cutStep.flatMap((part, index) => (isDelta(part) ? [index] : []));
        const cutAfter = random.between(1, deltaIndexes.length);
        const gated = gatedStream(
          cutStep.slice(0, deltaIndexes[cutAfter - 1]! + 1) as never,
          cutStep.slice(deltaIndexes[cutAfter - 1]! + 1) as never,
        );
        const model = scriptedModel((inSecondStep ? [first, gated.stream] : [gated.stream, textStep(ANSWER)]) as never);
        const handler = handlerFor(history, model, mode === 'disconnect-continue' ? 'continue' : 'cancel', nextId);
        tally.attempt(`abort:${mode}:${inSecondStep ? 'answer-step' : 'tool-step'}`);

        const response = await handler.POST(
          post({ threadId: thread.id, message: userMessage(`u-${round}`, 'Weather in Paris?') }),
        );
        const assistantId = response.headers.get('x-agent-history-message-id');
        if (
          !tally.expect(
            response.status === 200 && assistantId !== null,
            'the turn did not start',
            () => `${response.status}`,
          )
        )
          continue;
        const reader = sseReader(response);
        const deltasToSee = (inSecondStep ? first.filter(isDelta).length : 0) + cutAfter;
        let seenDeltas = 0;
        let seenText = '';
        while (seenDeltas < deltasToSee) {
          const chunk = await reader.next();
          if (!chunk) break;
          if (chunk.type === 'text-delta' || chunk.type === 'tool-input-delta') seenDeltas++;
          if (chunk.type === 'text-delta') seenText += chunk.delta ?? '';
        }
        if (mode === 'stop-route') {
          const stopped = await handler.stop(
            new Request('http://localhost/api/chat/stop', {
              method: 'POST',
              body: JSON.stringify({ threadId: thread.id }),
            }),
          );
          tally.expect(stopped.status === 200, 'the stop route failed', () => `${stopped.status}`);
          await reader.cancel();
        } else {
          await reader.cancel();
          if (mode === 'disconnect-continue') gated.release();
        }

        const row = await eventually(async () => {
          const [stored] = await database.admin.query<{
            status: string;
            parts: Array<{ type: string; text?: string }>;
          }>(
            `select status, parts from agent_message where thread_id = $1 and message_id = $2 and status not in ('pending', 'streaming')`,
            [thread.id, assistantId],
          );
          return stored;
        });
        if (!tally.expect(row !== undefined, 'the answer was never finalized', () => `${mode} ${assistantId}`))
          continue;
        const storedText = row!.parts
          .filter((part) => part.type === 'text')
          .map((part) => part.text)
          .join('');
        if (mode === 'disconnect-continue') {
          tally.expect(
            row!.status === 'completed' && storedText.endsWith(ANSWER),
            'a disconnected client lost the rest of the answer',
            () => `${row!.status} ${storedText}`,
          );
        } else {
          tally.expect(row!.status === 'cancelled', 'an aborted answer is not cancelled', () => row!.status);
          tally.expect(
            seenText.length > 0 ? storedText.includes(seenText.trim()) : true,
            'text the client saw is missing from the stored answer',
            () => `saw ${JSON.stringify(seenText)}, stored ${JSON.stringify(storedText)}`,
          );
          const run = await eventually(async () => {
            const [stored] = await database.admin.query<{ status: string }>(
              `select status from agent_run where thread_id = $1 and status <> 'running'`,
              [thread.id],
            );
            return stored;
          });
          tally.expect(
            run?.status === 'cancelled',
            'the aborted run is not cancelled',
            () => run?.status ?? 'still running',
          );
        }

        // The next turn: what the model is sent must pair every tool call with a result and keep the partial answer.
        const nextModel = scriptedModel([textStep('Noted.')]);
        const next = await handlerFor(history, nextModel, 'cancel', nextId).POST(
          post({ threadId: thread.id, message: userMessage(`u2-${round}`, 'And tomorrow?') }),
        );
        await next.text();
        tally.attempt('context:next-turn-sent');
        const prompt = nextModel.doStreamCalls[0]?.prompt;
        if (!tally.expect(prompt !== undefined, 'the next turn never reached the model', () => `${next.status}`))
          continue;
        const unpaired = unpairedToolParts(prompt!);
        tally.expect(
          unpaired.callsWithoutResult.length === 0 && unpaired.resultsWithoutCall.length === 0,
          'the next turn was sent an unpaired tool call',
          () => JSON.stringify(unpaired),
        );
        tally.expect(
          seenText.length === 0 || JSON.stringify(prompt).includes('Let me'),
          'the next turn lost the partial answer',
          () => JSON.stringify(prompt).slice(0, 200),
        );
        const sequences = await database.admin.query<{ sequence: string }>(
          'select sequence from agent_message where thread_id = $1 order by sequence',
          [thread.id],
        );
        tally.expect(
          sequences.map((row) => Number(row.sequence)).join(',') === '1,2,3,4',
          'the thread is not exactly two turns',
          () => sequences.map((row) => row.sequence).join(','),
        );
      }
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    scaledTimeout(90_000),
  );

  it(
    'should write no summary when the summarizer throws, returns nothing, hangs or answers after its timeout',
    async () => {
      const random = seededRandom();
      const tally = new ReliabilityTally('faults-summarizer-postgres');
      const profile = resolveModelProfile({
        modelId: 'reliability-small',
        overrides: { family: 'openai', contextWindow: 3_000, maxOutputTokens: 256 },
      });
      const policy = { summary: { timeoutMs: 200, reserveTokens: 300 } };
      const late: Promise<unknown>[] = [];
      const summarizers: Record<string, () => ContextSummarizer> = {
        throws: () => ({ id: 'throws', summarize: async () => Promise.reject(new Error('provider unavailable')) }),
        'returns-empty': () => ({ id: 'empty', summarize: async () => '' }),
        'returns-blank': () => ({ id: 'blank', summarize: async () => '  \n ' }),
        'returns-non-string': () => ({ id: 'non-string', summarize: async () => ({ text: 'x' }) as never }),
        hangs: () => ({ id: 'hangs', summarize: () => new Promise<string>(() => {}) }),
        // Answers once the engine gave up on it (its abort signal fired): after the timeout however slow the machine.
        'answers-after-timeout': () => ({
          id: 'late',
          summarize: ({ abortSignal }) => {
            const answer = new Promise<string>((resolve) =>
              abortSignal.addEventListener('abort', () => setImmediate(() => resolve('A summary that came too late.'))),
            );
            late.push(answer);
            return answer;
          },
        }),
      };
      const seedThread = async (store: TenantHistory) => {
        const thread = await store.createThread();
        for (let turn = 0; turn < 24; turn++) {
          const words = Array.from({ length: 40 }, () => random.word(random.between(3, 8))).join(' ');
          await store.appendMessage(thread.id, {
            id: `u-${turn}`,
            role: 'user',
            parts: [{ type: 'text', text: `Question ${turn}: ${words}` }],
          });
          await store.appendMessage(thread.id, {
            id: `a-${turn}`,
            role: 'assistant',
            parts: [{ type: 'text', text: `Answer ${turn}: ${words}` }],
          });
        }
        await store.appendMessage(thread.id, {
          id: 'u-last',
          role: 'user',
          parts: [{ type: 'text', text: 'And the last question?' }],
        });
        return thread.id;
      };
      const summaryCount = async (threadId: string) =>
        Number(
          (
            await database.admin.query<{ n: number }>(
              'select count(*)::int as n from agent_summary where thread_id = $1',
              [threadId],
            )
          )[0]!.n,
        );

      for (let round = 0; round < SUMMARIZER_ROUNDS; round++) {
        for (const [name, make] of Object.entries(summarizers)) {
          const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
          const threadId = await seedThread(store);
          const engine = createContextEngine({
            store: store.contextStore(threadId),
            profile,
            policy,
            summarizer: make(),
          });
          tally.attempt(`summarizer:${name}`);
          try {
            const { messages, report } = await engine.buildInitialContext({ instructions: 'Be brief.' });
            const stage = report.stages.find((entry) => entry.stage === 'summarize') as { status?: string } | undefined;
            tally.expect(
              stage?.status === 'failed',
              'a failing summarizer was not reported as failed',
              () => `${name}: ${stage?.status}`,
            );
            tally.expect(
              messages.length > 0 && messages.at(-1)?.role === 'user',
              'the context after a failed summary lost the newest input',
              () => `${name}: ${messages.length}`,
            );
          } catch (error) {
            tally.expect(
              AgentHistoryError.isInstance(error),
              'a failing summarizer ended in an untyped error',
              () => `${name}: ${String(error)}`,
            );
          }
          await Promise.all(late.splice(0));
          await new Promise((resolve) => setTimeout(resolve, 20));
          const written = await summaryCount(threadId);
          tally.expect(written === 0, 'a failed summarizer wrote a summary', () => `${name}: ${written} summaries`);
        }
        // The control: the same thread with a working summarizer does get a summary (so the failures above were real).
        const store = createAgentHistory({ db: database.db }).forTenant(randomUUID());
        const threadId = await seedThread(store);
        const working: ContextSummarizer = {
          id: 'working',
          summarize: async ({ fromSequence, throughSequence }) =>
            `Turns ${fromSequence} to ${throughSequence}: questions and answers.`,
        };
        await createContextEngine({
          store: store.contextStore(threadId),
          profile,
          policy,
          summarizer: working,
        }).buildInitialContext({ instructions: 'Be brief.' });
        tally.attempt('summarizer:working-control');
        tally.expect(
          (await summaryCount(threadId)) === 1,
          'the working summarizer wrote no summary (the failures were not exercised)',
          () => 'control',
        );
      }
      tally.record();
      expect(tally.violations).toEqual([]);
    },
    scaledTimeout(60_000),
  );
});
