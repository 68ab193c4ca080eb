// Runs the context engine on a generated conversation (test/support/agent-conversations.ts) exactly as an app
// configured to its budget would (`maxInputTokens`, `targetRatio: 1`, a deterministic summarizer or none), and
// checks every model call it prepares against the context engine's rules, independently of the engine: never over
// the budget by the exact o200k count of what is sent (test/support/count-sent-tokens.ts), tool calls and approvals
// kept in pairs, the newest input and pinned messages kept, no invented results, snapshots that rebuild exactly, and
// how much of the budget is used. Shared by the property tests and the bench.
import { convertToModelMessages, type ModelMessage } from 'ai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import {
  ContextBudgetExceededError,
  createContextEngine,
  rebuildContextFromSnapshot,
  resolveModelProfile,
  type ContextPolicyInput,
  type ContextReport,
  type ContextSummarizer,
  type CreateContextEngineOptions,
} from '../../src/context/index.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { createMemoryContextStore } from '../../src/testing/index.js';
import type { GeneratedConversation } from './agent-conversations.js';
import { countSentTokens } from './count-sent-tokens.js';
import { isMemoryMessage, memoryProblems, withGeneratedMemory } from './generated-memory.js';

/** A deterministic summarizer: a fixed header and the transcript's first and last lines, within its limit. */
export const mockSummarizer: ContextSummarizer = {
  id: 'mock',
  summarize: async ({ transcript, previousSummary, maxOutputTokens, fromSequence, throughSequence }) => {
    const lines = transcript.split('\n').filter((line) => line.trim() !== '');
    const body = [
      `## Goals\n- Messages ${fromSequence}-${throughSequence} folded in.`,
      previousSummary ? `## Earlier\n${previousSummary.slice(0, 400)}` : '',
      `## Notes\n${[...lines.slice(0, 8), ...lines.slice(-8)].join('\n')}`,
    ].join('\n');
    return body.slice(0, Math.max(40, maxOutputTokens * 2));
  },
};

export const instructions = 'You are a careful assistant. Answer briefly and use the tools when needed.';
export const toolDefinitions = ['weather', 'search', 'readFile', 'runQuery', 'deploy'].map((name) => ({
  name,
  description: `The ${name} tool.`,
  inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
}));
export const profile = resolveModelProfile({
  modelId: 'gpt-4o',
  overrides: { contextWindow: 2_000_000, maxOutputTokens: 1000 },
});
const exact = (value: string) => countTokens(value, { disallowedSpecial: new Set() });
/** The instructions and tool definitions as sent, counted exactly. */
export const fixedTokens =
  exact(instructions) +
  profile.perMessageTokens +
  toolDefinitions.reduce(
    (sum, tool) => sum + exact(tool.name) + exact(tool.description) + exact(JSON.stringify(tool.inputSchema)),
    0,
  ) +
  toolDefinitions.length * profile.perToolTokens +
  profile.toolsPreambleTokens;

/** What was wrong with one prepared model call. */
export interface CallCheck {
  /** Independent count of the whole input sent (messages, instructions, tools). */
  sentTokens: number;
  /** The engine's own count of the same input (`report.estimatedTokens`). */
  engineTokens: number;
  /** The budget (`maxInputTokens`). */
  budget: number;
  /** Whether the engine had to cut anything (select, summarize or trim removed something). */
  cut: boolean;
  /**
   * What the call would have sent without the engine (the AI SDK's conversion of the stored thread, the steps so
   * far, instructions and tools), by the independent count: above `budget`, the history exceeded the budget before
   * any stage ran.
   */
  unmanagedTokens: number;
  /** The role the messages start on, when it is not `user` (null when it is). */
  firstRole: string | null;
  /** Tokens over the budget by the independent count (0 when within). */
  overBudgetTokens: number;
  /** Calls without results, results without calls, approvals without their pair (pending ones excepted). */
  splitPairs: string[];
  /** Whether the newest user message is missing. */
  lostNewest: boolean;
  /** Pinned messages missing. */
  lostPinned: number[];
  /** Results sent that are neither the stored/step result (or its preview) nor a closure of an unfinished call. */
  invented: string[];
  /** Whether the snapshot written for this call rebuilds exactly (null when none was written). */
  snapshotExact: boolean | null;
  /** Memory out of place, cut, out of order, or kept while an item before it was dropped (generated-memory.ts). */
  memoryProblems: string[];
  /**
   * With `compareWithoutMemory`: whether the call's other messages differ from those of the same call without any
   * memory (memory took room from the history). Null when not compared.
   */
  memoryDisplacedHistory: boolean | null;
  /** Time the engine took for the call, in ms. */
  ms: number;
  /** The messages sent. */
  sent: readonly ModelMessage[];
}

/** The outcome of running one conversation. */
export interface ConversationRun {
  /** One check per model call (the initial context, then each step). */
  calls: CallCheck[];
  /** Set when the engine refused with a typed error because what may never be cut exceeds the budget. */
  refused: ContextBudgetExceededError | null;
}

/** The engine an app configured exactly to the conversation's budget would create. */
export function createGeneratedEngine(
  conversation: GeneratedConversation,
  store: ReturnType<typeof createMemoryContextStore>,
  tokenCounter: TokenCounter,
  _internal?: { wholeThread?: boolean },
  policy: ContextPolicyInput = {},
  extra: Pick<CreateContextEngineOptions, 'calibrator' | 'onReport'> = {},
) {
  const budget = conversation.maxInputTokens;
  return createContextEngine({
    ...extra,
    _internal,
    store,
    profile,
    tokenCounter,
    instructions,
    toolDefinitions,
    maxInputTokens: budget,
    summarizer: conversation.summarizer ? mockSummarizer : undefined,
    policy: {
      ...policy,
      // Only the budget limits the memory here: items of any size reach it.
      memory: {
        workingMemory: 'include',
        recall: { mode: 'auto', limit: 10, maxTokens: 100_000_000 },
        ...policy.memory,
      },
      summary: { targetRatio: 1, reserveTokens: Math.min(2000, Math.floor(budget / 8)), ...policy.summary },
      // The budget-filling configuration: previews cut to the room and grown back (fixed ones leave room unused).
      toolOutputPreview: { sizing: 'fit', ...policy.toolOutputPreview },
    },
  });
}

/** Runs the engine on a generated conversation and checks every call (`policy` over the budget-filling one). */
export async function runGeneratedConversation(
  conversation: GeneratedConversation,
  tokenCounter: TokenCounter,
  policy: ContextPolicyInput = {},
  { compareWithoutMemory = false }: { compareWithoutMemory?: boolean } = {},
): Promise<ConversationRun> {
  const reference =
    compareWithoutMemory && conversation.memory
      ? await runGeneratedConversation({ ...conversation, memory: null }, tokenCounter, policy)
      : null;
  const store = withGeneratedMemory(createMemoryContextStore({ messages: conversation.rows }), conversation.memory);
  const engine = createGeneratedEngine(conversation, store, tokenCounter, undefined, policy);
  const calls: CallCheck[] = [];
  const sources = collectSources(conversation);
  let unmanaged = await unmanagedTokens(conversation);
  const checked = (messages: readonly ModelMessage[], report: ContextReport, ms: number) => ({
    ...check(conversation, sources, messages, report, ms, store, tokenCounter),
    unmanagedTokens: unmanaged,
    memoryDisplacedHistory: reference
      ? JSON.stringify(messages.filter((message) => !isMemoryMessage(message))) !==
        JSON.stringify(reference.calls[calls.length]?.sent ?? null)
      : null,
  });
  try {
    let started = performance.now();
    const initial = await engine.buildInitialContext();
    let messages = initial.messages;
    calls.push(checked(messages, initial.report, performance.now() - started));
    for (const [index, step] of conversation.steps.entries()) {
      messages = [...messages, ...step];
      unmanaged += countSentTokens(step as never, profile);
      started = performance.now();
      const prepared = await engine.prepareStep({ messages, stepNumber: index + 1, instructions });
      messages = prepared.messages ?? messages;
      calls.push(checked(messages, prepared.report, performance.now() - started));
    }
  } catch (error) {
    if (error instanceof ContextBudgetExceededError) return { calls, refused: error };
    throw error;
  }
  return { calls, refused: null };
}

/** What the stored thread would send without the engine: the AI SDK's conversion, instructions and tools. */
async function unmanagedTokens(conversation: GeneratedConversation): Promise<number> {
  const converted = await convertToModelMessages(conversation.rows.map((row) => row.message) as never);
  return countSentTokens(converted as never, profile) + fixedTokens;
}

interface Sources {
  /** Every real result by call id: its output as the engine would send it (JSON compared loosely). */
  results: Map<string, string>;
  /** Calls that had no result (unfinished, approvals superseded or open). */
  unfinished: Set<string>;
  /** Calls of the newest turn awaiting an approval or its execution (never closed with a result). */
  open: Set<string>;
  newestUserText: string;
  pinnedTexts: Map<number, string[]>;
}

function collectSources(conversation: GeneratedConversation): Sources {
  const results = new Map<string, string>();
  const unfinished = new Set<string>();
  const open = new Set<string>();
  const newestUser = conversation.rows.findLast((row) => row.message.role === 'user')!;
  for (const row of conversation.rows) {
    for (const part of row.message.parts) {
      if (typeof part.toolCallId !== 'string') continue;
      const denied =
        part.state === 'approval-responded' && (part.approval as { approved?: boolean }).approved === false;
      // A denied approval is sent as an `execution-denied` result, as the AI SDK's conversion does.
      if (
        part.state === 'output-available' ||
        part.state === 'output-error' ||
        part.state === 'output-denied' ||
        denied
      )
        results.set(part.toolCallId, String(part.state));
      else {
        unfinished.add(part.toolCallId);
        if (row.sequence > newestUser.sequence) open.add(part.toolCallId);
      }
    }
  }
  for (const step of conversation.steps)
    for (const message of step)
      if (typeof message.content !== 'string')
        for (const part of message.content) if (part.type === 'tool-result') results.set(part.toolCallId, 'step');
  const textOf = (parts: readonly { type: string; text?: unknown }[]) =>
    parts.filter((part) => part.type === 'text').map((part) => String(part.text));
  const pinnedTexts = new Map(
    conversation.rows.filter((row) => row.pinned).map((row) => [row.sequence, textOf(row.message.parts)]),
  );
  return { results, unfinished, open, newestUserText: textOf(newestUser.message.parts as never)[0]!, pinnedTexts };
}

function check(
  conversation: GeneratedConversation,
  sources: Sources,
  messages: readonly ModelMessage[],
  report: ContextReport,
  ms: number,
  store: ReturnType<typeof createMemoryContextStore>,
  tokenCounter: TokenCounter,
): Omit<CallCheck, 'unmanagedTokens' | 'memoryDisplacedHistory'> {
  const sentTokens = countSentTokens(messages as never, profile) + fixedTokens;
  const cut = report.stages.some(
    (stage) =>
      (stage.stage === 'select' || stage.stage === 'summarize' || stage.stage === 'trim') && stage.removed.length > 0,
  );
  const sent = JSON.stringify(messages);
  const invented: string[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      if (sources.results.has(part.toolCallId)) continue;
      const closure =
        sources.unfinished.has(part.toolCallId) &&
        !sources.open.has(part.toolCallId) &&
        (part.output.type === 'error-text' || part.output.type === 'error-json') &&
        String(part.output.value).startsWith('The tool call');
      if (!closure) invented.push(part.toolCallId);
    }
  }
  const userTexts = messages
    .filter((message) => message.role === 'user')
    .map((message) => JSON.stringify(message.content));
  const lostNewest = !userTexts.some((content) => content.includes(JSON.stringify(sources.newestUserText)));
  const lostPinned = [...sources.pinnedTexts]
    .filter(([, texts]) => texts.some((value) => !sent.includes(JSON.stringify(value).slice(1, -1))))
    .map(([sequence]) => sequence);
  let snapshotExact: boolean | null = null;
  if (report.snapshot.status === 'written') {
    const snapshot = store.snapshots.at(-1)!;
    const rebuilt = rebuildContextFromSnapshot({
      snapshot,
      summary: store.summaries.find((summary) => summary.id === snapshot.summaryId) ?? null,
      // The store never changes the messages it was given: the rows stand for its log (no copy of it).
      messages: conversation.rows,
      tokenCounter,
      memory: conversation.memory ?? undefined,
    });
    snapshotExact = rebuilt.matches;
  }
  return {
    sentTokens,
    engineTokens: report.estimatedTokens,
    budget: conversation.maxInputTokens,
    cut,
    firstRole: firstRoleAfterSummary(messages),
    overBudgetTokens: Math.max(0, sentTokens - conversation.maxInputTokens),
    splitPairs: toolPairProblems(messages),
    lostNewest,
    lostPinned,
    invented,
    snapshotExact,
    memoryProblems: memoryProblems(messages, conversation.memory),
    sent: messages,
    ms,
  };
}

/**
 * The role of the first message after the summary (a `user` message the engine puts first, recognised by its
 * header), when it is not `user`; null when it is.
 */
export function firstRoleAfterSummary(messages: readonly ModelMessage[]): string | null {
  const summary = (message: ModelMessage) =>
    message.role === 'user' && JSON.stringify(message.content).includes('[Summary of the earlier conversation');
  const first = messages.find((message) => message.role !== 'system' && !summary(message) && !isMemoryMessage(message));
  return first === undefined || first.role === 'user' ? null : first.role;
}

/** Tool pairing problems the AI SDK or a provider would reject; an approval still awaiting its answer is allowed. */
export function toolPairProblems(messages: readonly ModelMessage[]): string[] {
  const problems: string[] = [];
  const calls = new Set<string>();
  const open = new Set<string>();
  const approvals = new Map<string, string>();
  const answered = new Set<string>();
  const awaiting = new Set<string>();
  for (const message of messages) {
    if (message.role === 'user' && open.size > 0) problems.push(`user message while calls are open: ${[...open]}`);
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call') {
        calls.add(part.toolCallId);
        if (part.providerExecuted !== true) open.add(part.toolCallId);
      } else if (part.type === 'tool-result') {
        if (!calls.has(part.toolCallId)) problems.push(`result without call: ${part.toolCallId}`);
        open.delete(part.toolCallId);
      } else if (part.type === 'tool-approval-request') {
        if (!calls.has(part.toolCallId)) problems.push(`approval request without call: ${part.toolCallId}`);
        approvals.set(part.approvalId, part.toolCallId);
        awaiting.add(part.toolCallId);
      } else if (part.type === 'tool-approval-response') {
        const id = approvals.get(part.approvalId);
        if (id === undefined) problems.push(`approval response without request: ${part.approvalId}`);
        else {
          awaiting.delete(id);
          answered.add(id);
        }
      }
    }
  }
  // Only calls of the last turn may stay open, and only when an approval is pending or answered but not run.
  for (const id of open) if (!awaiting.has(id) && !answered.has(id)) problems.push(`call without result: ${id}`);
  return problems;
}

/**
 * The calls of one request on a generated conversation: the engine's first call, then (with `steps`) each of the
 * conversation's steps appended to the previous call's messages, every call handed to `keep`. Returns the message
 * of a `ContextBudgetExceededError` that refused a call (the calls before it are kept), or null.
 */
export async function walkGeneratedRequest(
  engine: ReturnType<typeof createGeneratedEngine>,
  conversation: GeneratedConversation,
  keep: (messages: ModelMessage[], report: ContextReport) => void,
  steps = true,
): Promise<string | null> {
  try {
    const initial = await engine.buildInitialContext();
    let messages = initial.messages;
    keep(messages, initial.report);
    if (steps)
      for (const [index, step] of conversation.steps.entries()) {
        messages = [...messages, ...step];
        const prepared = await engine.prepareStep({ messages, stepNumber: index + 1 });
        messages = prepared.messages ?? messages;
        keep(messages, prepared.report);
      }
  } catch (error) {
    if (!(error instanceof ContextBudgetExceededError)) throw error;
    return error.message;
  }
  return null;
}
