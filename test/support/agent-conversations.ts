// A seeded generator of agent conversations for the context engine, shared by the CI-size property tests
// (test/context/engine/generated-conversations.test.ts) and the 100,000-conversation bench (bench/context-fit.ts).
// A conversation is a stored thread (5 to 2,000 messages: text, reasoning, files, tool parts of every state,
// parallel calls, dynamic and provider-executed tools, approvals answered, superseded and pending, 50-200 KB
// tool outputs, pasted logs and code, CJK, pinned messages) plus the model steps of the request in progress
// (tool results of every output type), a budget of 2k to 200k tokens, and most often memory from outside the thread
// (a working memory and recalled items of random sizes, up to more than the budget). Deterministic for a seed.
import type { ModelMessage } from 'ai';
import type { ContextMemory, ContextMessage } from '../../src/model/context-store.js';
import { generateMemory } from './generated-memory.js';
import type { ContextUIMessage, ContextUIPart } from '../../src/model/context-ui-message.js';

/** A deterministic random source (mulberry32). */
export function createRandom(seed: number) {
  let state = seed >>> 0 || 0x9e3779b9;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const random = {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability: number) => next() < probability,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    /** Log-uniform between min and max: as many small values as large ones, per decade. */
    logInt: (min: number, max: number) =>
      Math.round(Math.exp(Math.log(min) + next() * (Math.log(max) - Math.log(min)))),
  };
  return random;
}

type Random = ReturnType<typeof createRandom>;

const sentences = [
  'Can you check the weather in Paris for tomorrow?',
  'Please summarize the report and list the open questions.',
  'The deployment failed with exit code 137 after 4 minutes.',
  'Remember that my budget is 3,000 EUR and I prefer trains.',
  '你好，请帮我查一下明天北京的天气。',
  '我们需要在周五之前完成第二阶段的测试。会议记录如下：第一，完成接口设计。',
  '東京の天気を教えてください。明日は雨ですか？',
  '다음 주 회의 일정을 확인해 주세요.',
  'OK.',
  'Let me look at the logs first, then propose a fix.',
];

/** Large payloads, built once (counting them is cached by text in the counters). */
const payloads = (() => {
  const json = (rows: number) =>
    JSON.stringify({
      rows: Array.from({ length: rows }, (_row, index) => ({
        id: index,
        name: `item ${index}`,
        status: index % 7 ? 'ok' : 'failed',
        note: 'lorem ipsum dolor sit amet, consectetur adipiscing elit',
      })),
    });
  const log = (lines: number) =>
    Array.from(
      { length: lines },
      (_line, index) =>
        `2026-11-0${(index % 9) + 1}T12:${String(index % 60).padStart(2, '0')}:07.${index % 1000}Z ${index % 13 ? 'INFO' : 'ERROR'} worker-${index % 8} request ${index * 7919} took ${index % 977} ms path=/api/v1/items/${index}`,
    ).join('\n');
  const code = (lines: number) =>
    Array.from(
      { length: lines },
      (_line, index) =>
        `export function compute${index}(value: number): number {\n  return value * ${index} + Math.sqrt(${index});\n}`,
    ).join('\n');
  const cjk = (repeat: number) =>
    '今天我们讨论项目的进度，以及下一步的计划。会议记录如下：第一，完成接口设计；第二，补充测试用例。'.repeat(repeat);
  return {
    // 50-200 KB tool outputs.
    huge: [json(600), json(1500), json(2400), log(400), log(1400), code(900), code(2000), cjk(600), cjk(1500)],
    // Pasted logs and code in user messages, 2-20 KB.
    pasted: [log(20), log(150), code(30), code(200), cjk(40)],
  };
})();

/** What a generated conversation holds and how its context is to be built. */
export interface GeneratedConversation {
  /** The seed it was generated from. */
  seed: number;
  /** The stored thread, sequences 1…n. */
  rows: ContextMessage[];
  /** The model steps of the request in progress, each appended to the messages of the previous one. */
  steps: ModelMessage[][];
  /** The budget for the whole input (`maxInputTokens`). */
  maxInputTokens: number;
  /** Whether a summarizer is configured. */
  summarizer: boolean;
  /** What the store's `loadMemory` returns (test/support/generated-memory.ts), or null for a store without memory. */
  memory: ContextMemory | null;
}

/** Options of {@link generateConversation}. */
export interface GenerateConversationOptions {
  /** The largest number of stored messages (default 2,000). */
  maxMessages?: number;
  /** The smallest and largest budget (default 2,000 and 200,000). */
  budget?: [number, number];
  /**
   * The newest turn, when not left to chance: `in-progress` (its assistant message stored mid-answer, several steps
   * with large payloads and its last step's calls answered or approved but not run yet) or `awaiting-approval` (the
   * same, its last step waiting for the user to approve a call). Its first call is then often older than the budget.
   */
  newestTurn?: NewestTurn;
  /**
   * Pin the answer of the oldest turn (its assistant message), so that a context which leaves that turn out still
   * keeps the answer without the user message it answers. @default false
   */
  pinnedAnswer?: boolean;
  /** Whether the store may have memory from outside the thread (two thirds of the conversations do). @default true */
  memory?: boolean;
}

/** A newest turn {@link generateConversation} is asked for. */
export type NewestTurn = 'in-progress' | 'awaiting-approval';

/** Generates one conversation from a seed. */
export function generateConversation(seed: number, options: GenerateConversationOptions = {}): GeneratedConversation {
  const random = createRandom(seed);
  const [minBudget, maxBudget] = options.budget ?? [2000, 200_000];
  const messageCount = random.logInt(5, options.maxMessages ?? 2000);
  const ids = { call: 0 };
  const rows: ContextMessage[] = [];
  let pinned = random.chance(0.3) ? random.int(1, 3) : 0;
  while (rows.length < messageCount - 1) {
    rows.push(storedRow(rows.length + 1, userMessage(random, rows.length + 1), random.chance(0.05) && pinned-- > 0));
    const assistant = assistantMessage(random, rows.length + 1, ids, 'history');
    if (assistant) rows.push(storedRow(rows.length + 1, assistant, random.chance(0.03) && pinned-- > 0));
  }
  // The newest turn: a user message (sometimes huge), and sometimes the assistant message of a turn in progress.
  const newest = userMessage(random, rows.length + 1);
  rows.push(storedRow(rows.length + 1, newest, random.chance(0.05)));
  if (options.newestTurn)
    rows.push(storedRow(rows.length + 1, newestAssistant(random, rows.length + 1, ids, options.newestTurn), false));
  else if (random.chance(0.35)) {
    const assistant = assistantMessage(random, rows.length + 1, ids, 'newest');
    if (assistant) rows.push(storedRow(rows.length + 1, assistant, false));
  }
  if (options.pinnedAnswer && rows[1]?.message.role === 'assistant') rows[1] = { ...rows[1], pinned: true };
  const last = rows.at(-1)!.message;
  const pendingApproval = last.role === 'assistant' && last.parts.some((part) => part.state === 'approval-requested');
  const steps = pendingApproval ? [] : modelSteps(random, ids);
  const maxInputTokens = random.logInt(minBudget, maxBudget);
  const summarizer = random.chance(0.5);
  // Drawn last, so that the thread, the steps and the budget are those of the same seed without memory.
  const memory = options.memory === false ? null : generateMemory(random, maxInputTokens);
  return { seed, rows, steps, maxInputTokens, summarizer, memory };
}

function storedRow(sequence: number, message: ContextUIMessage, pinned: boolean): ContextMessage {
  return {
    sequence,
    message,
    status: 'completed',
    contextState: 'eligible',
    pinned,
    tokenCount: null,
    tokenCounterId: null,
    deletedAt: null,
  };
}

function text(random: Random, min = 1, max = 4): string {
  return Array.from({ length: random.int(min, max) }, () => random.pick(sentences)).join(' ');
}

function userMessage(random: Random, sequence: number): ContextUIMessage {
  const parts: ContextUIPart[] = [{ type: 'text', text: text(random) }];
  if (random.chance(0.06)) parts.push({ type: 'text', text: `\`\`\`\n${random.pick(payloads.pasted)}\n\`\`\`` });
  if (random.chance(0.01)) parts.push({ type: 'text', text: random.pick(payloads.huge) });
  if (random.chance(0.04)) parts.push({ type: 'file', mediaType: 'image/png', url: 'https://example.com/photo.png' });
  if (random.chance(0.02))
    parts.push({
      type: 'file',
      mediaType: 'application/pdf',
      url: 'https://example.com/report.pdf',
      filename: 'r.pdf',
    });
  return { id: `u${sequence}`, role: 'user', parts };
}

const toolNames = ['weather', 'search', 'readFile', 'runQuery', 'deploy'];

function output(random: Random): unknown {
  if (random.chance(0.04)) return random.pick(payloads.huge);
  return random.pick([
    () => ({ tempC: random.int(-20, 40), summary: text(random, 1, 2) }),
    () => text(random, 1, 6),
    () => ({
      rows: Array.from({ length: random.int(0, 5) }, (_row, index) => ({ id: index, note: text(random, 1, 1) })),
    }),
  ])();
}

function input(random: Random): unknown {
  if (random.chance(0.02)) return { path: 'notes.md', content: random.pick(payloads.huge) };
  if (random.chance(0.05)) return { path: 'snippet.ts', content: random.pick(payloads.pasted) };
  return { query: text(random, 1, 1) };
}

type ToolMode = 'history' | 'newest';

function toolPart(random: Random, ids: { call: number }, mode: ToolMode, last: boolean): ContextUIPart {
  const toolCallId = `call-${++ids.call}`;
  const dynamic = random.chance(0.1);
  const name = random.pick(toolNames);
  const base: ContextUIPart = dynamic
    ? { type: 'dynamic-tool', toolName: name, toolCallId, input: input(random) }
    : { type: `tool-${name}`, toolCallId, input: input(random) };
  if (random.chance(0.05)) base.providerExecuted = true;
  const approval = { id: `approval-${toolCallId}` };
  const states = ['output-available', 'output-available', 'output-available', 'output-error', 'output-denied'];
  // Superseded (history) or still open (newest turn, last step) approvals, and unfinished calls.
  if (last && mode === 'newest') states.push('approval-requested', 'approval-responded', 'approval-requested');
  if (mode === 'history') states.push('approval-requested', 'input-available');
  switch (random.pick(states)) {
    case 'output-error':
      return { ...base, state: 'output-error', errorText: text(random, 1, 1) };
    case 'output-denied':
      return { ...base, state: 'output-denied', approval: { ...approval, approved: false, reason: 'not allowed' } };
    case 'approval-requested':
      return { ...base, state: 'approval-requested', approval };
    case 'approval-responded':
      return { ...base, state: 'approval-responded', approval: { ...approval, approved: random.chance(0.5) } };
    case 'input-available':
      return { ...base, state: 'input-available' };
    default:
      return {
        ...base,
        state: 'output-available',
        output: output(random),
        ...(random.chance(0.2) ? { approval: { ...approval, approved: true } } : {}),
      };
  }
}

function assistantMessage(
  random: Random,
  sequence: number,
  ids: { call: number },
  mode: ToolMode,
): ContextUIMessage | undefined {
  if (mode === 'history' && random.chance(0.05)) return undefined;
  const stepCount = random.chance(0.3) ? random.int(2, 8) : random.int(1, 2);
  const parts: ContextUIPart[] = [];
  for (let step = 0; step < stepCount; step++) {
    const last = step === stepCount - 1;
    parts.push({ type: 'step-start' });
    if (random.chance(0.4)) parts.push({ type: 'reasoning', text: text(random, 1, random.chance(0.1) ? 60 : 4) });
    const calls = random.chance(0.5) ? (random.chance(0.3) ? random.int(2, 5) : 1) : 0;
    for (let call = 0; call < calls; call++) parts.push(toolPart(random, ids, mode, last));
    if (random.chance(0.02)) parts.push({ type: 'file', mediaType: 'image/png', url: 'https://example.com/chart.png' });
    if (calls === 0 || random.chance(0.5)) parts.push({ type: 'text', text: text(random, 1, 5) });
  }
  return { id: `a${sequence}`, role: 'assistant', parts };
}

/**
 * The assistant message of a newest turn in progress: two to eight steps whose calls often carry 50-200 KB inputs or
 * outputs, and a last step (sometimes with a 2-20 KB text) of parallel calls, at least one of them approved, denied
 * or (`awaiting-approval`) still awaiting the user's answer; the others finished or answered.
 */
function newestAssistant(random: Random, sequence: number, ids: { call: number }, turn: NewestTurn): ContextUIMessage {
  const stepCount = random.int(2, 8);
  const parts: ContextUIPart[] = [];
  const callPart = (state: string, extra: Record<string, unknown>): ContextUIPart => {
    const toolCallId = `call-${++ids.call}`;
    const payload = random.chance(0.25) ? { path: 'notes.md', content: random.pick(payloads.huge) } : input(random);
    return { type: `tool-${random.pick(toolNames)}`, toolCallId, input: payload, state, ...extra };
  };
  for (let step = 0; step < stepCount; step++) {
    parts.push({ type: 'step-start' });
    if (random.chance(0.4)) parts.push({ type: 'reasoning', text: text(random, 1, 4) });
    if (step === stepCount - 1) {
      // Sometimes a long text the trim cannot shorten: the round goes whole, or nothing of it does.
      if (random.chance(0.3)) parts.push({ type: 'text', text: random.pick(payloads.pasted) });
      const calls = random.int(1, 4);
      const pending = random.int(0, calls - 1);
      for (let call = 0; call < calls; call++) {
        const approval = { id: `approval-${ids.call + 1}` };
        if (call === pending && turn === 'awaiting-approval') parts.push(callPart('approval-requested', { approval }));
        else if (call === pending || random.chance(0.4))
          parts.push(callPart('approval-responded', { approval: { ...approval, approved: random.chance(0.7) } }));
        else parts.push(callPart('output-available', { output: output(random) }));
      }
      continue;
    }
    for (let call = random.int(1, 3); call > 0; call--)
      parts.push(
        callPart('output-available', { output: random.chance(0.3) ? random.pick(payloads.huge) : output(random) }),
      );
    if (random.chance(0.5)) parts.push({ type: 'text', text: text(random, 1, 3) });
  }
  return { id: `a${sequence}`, role: 'assistant', parts };
}

/** Each step: one assistant message of parallel calls (some provider-executed) and the tool message answering it. */
function modelSteps(random: Random, ids: { call: number }): ModelMessage[][] {
  const count = random.chance(0.4) ? random.int(1, 4) : 0;
  return Array.from({ length: count }, () => {
    const calls = random.int(1, 4);
    const assistant: Array<Record<string, unknown>> = [];
    const results: Array<Record<string, unknown>> = [];
    if (random.chance(0.4)) assistant.push({ type: 'reasoning', text: text(random, 1, 6) });
    for (let call = 0; call < calls; call++) {
      const toolCallId = `step-call-${++ids.call}`;
      const toolName = random.pick(toolNames);
      const providerExecuted = random.chance(0.1);
      assistant.push({
        type: 'tool-call',
        toolCallId,
        toolName,
        input: input(random),
        ...(providerExecuted ? { providerExecuted } : {}),
      });
      const result = { type: 'tool-result', toolCallId, toolName, output: resultOutput(random) };
      (providerExecuted ? assistant : results).push(result);
    }
    const messages = [{ role: 'assistant', content: assistant }] as ModelMessage[];
    if (results.length > 0) messages.push({ role: 'tool', content: results } as ModelMessage);
    return messages;
  });
}

function resultOutput(random: Random): Record<string, unknown> {
  const value = output(random);
  switch (random.int(0, 6)) {
    case 0:
      return { type: 'error-text', value: text(random, 1, 1) };
    case 1:
      return { type: 'error-json', value: { code: 503, message: text(random, 1, 1) } };
    case 2:
      return { type: 'execution-denied', ...(random.chance(0.5) ? { reason: 'The user said no.' } : {}) };
    case 3:
      return {
        type: 'content',
        value: [
          { type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) },
          ...(random.chance(0.5)
            ? [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } }]
            : []),
        ],
      };
    default:
      return typeof value === 'string' ? { type: 'text', value } : { type: 'json', value };
  }
}
