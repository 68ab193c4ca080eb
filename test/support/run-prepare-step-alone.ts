// Runs a generated conversation (test/support/agent-conversations.ts) the way most apps first wire the context
// manager: a `ToolLoopAgent` given the app's own conversion of the stored thread (`convertToModelMessages`, no
// `initialMessages()`) and only the manager's `prepareStep`, on a mock model that plays the conversation's steps.
// Every model call is checked against the context engine's rules on what the model was actually sent: never over
// the budget (independent o200k count), no call without its result or result without its call, no approval
// response without its request, the newest user input and every pinned message kept, a user message first, and the
// messages' order as given. Pinned messages carry provider options (a cache breakpoint), as an app marking them
// for the provider's prompt cache would.
import {
  MissingToolResultsError,
  ToolLoopAgent,
  convertToModelMessages,
  isStepCount,
  jsonSchema,
  tool,
  type ModelMessage,
} from 'ai';
import type { LanguageModelV4Content, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { createContextManager } from '../../src/ai-sdk/context-manager/create-context-manager.js';
import { ContextBudgetExceededError } from '../../src/context/index.js';
import type { ContextMessage } from '../../src/model/context-store.js';
import type { ContextUIMessage } from '../../src/model/context-ui-message.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { createMemoryContextStore } from '../../src/testing/index.js';
import type { GeneratedConversation } from './agent-conversations.js';
import {
  firstRoleAfterSummary,
  fixedTokens,
  instructions,
  mockSummarizer,
  profile,
  toolDefinitions,
  toolPairProblems,
} from './check-generated-context.js';
import { copyMessages } from './copy-messages.js';
import { countSentTokens } from './count-sent-tokens.js';

/** What was wrong with one model call. */
export interface AloneCall {
  /** Tokens over the budget by the independent count of the messages sent (0 when within). */
  overBudgetTokens: number;
  /** Pairing problems, in the messages `prepareStep` left and in the prompt the model got. */
  splitPairs: string[];
  /** Whether the newest user input is missing from the prompt. */
  lostNewest: boolean;
  /** Pinned messages (by sequence) missing from the prompt. */
  lostPinned: number[];
  /** The role the prompt starts on after the instructions and the summary, when it is not `user`. */
  firstRole: string | null;
  /** Tool call or result ids sent in another order than `prepareStep` was given them. */
  reordered: string[];
}

/** The outcome of one run. */
export interface AloneRun {
  /** One check per model call. */
  calls: AloneCall[];
  /** The typed refusal, when what may never be cut exceeds the budget. */
  refused: ContextBudgetExceededError | null;
  /** Any other error `prepareStep` threw. */
  thrown: unknown;
  /**
   * The SDK's refusal to send a prompt whose newest call awaits the user's approval (`MissingToolResultsError`):
   * the messages `prepareStep` returned were checked, the model got none.
   */
  awaitingApproval: boolean;
  /** The messages of each call, as `prepareStep` left them. */
  sent: ModelMessage[][];
  /** The prompt of each call the model got. */
  prompts: LanguageModelV4Prompt[];
}

/** Options of {@link runPrepareStepAlone}. */
export interface RunPrepareStepAloneOptions {
  /** Hand `prepareStep` deep copies of the SDK's messages, as a wrapper that builds its own would. */
  copy: boolean;
  /** Start from `initialMessages()` instead, as the reference the path alone is compared with. @default false */
  initial?: boolean;
}

const cacheBreakpoint = { anthropic: { cacheControl: { type: 'ephemeral' } } };

/** The stored rows with a cache breakpoint on every text part of a pinned message. */
function withPinOptions(rows: readonly ContextMessage[]): ContextMessage[] {
  return rows.map((row) =>
    row.pinned
      ? {
          ...row,
          message: {
            ...row.message,
            parts: row.message.parts.map((part) =>
              part.type === 'text' ? { ...part, providerMetadata: cacheBreakpoint } : part,
            ),
          },
        }
      : row,
  );
}

/** Runs the conversation through a `ToolLoopAgent` with only the manager's `prepareStep`, and checks every call. */
export async function runPrepareStepAlone(
  conversation: GeneratedConversation,
  tokenCounter: TokenCounter,
  { copy, initial = false }: RunPrepareStepAloneOptions,
): Promise<AloneRun> {
  const rows = withPinOptions(conversation.rows);
  const store = createMemoryContextStore({ messages: rows });
  const budget = conversation.maxInputTokens;
  const outputs = new Map<string, unknown>();
  const tools = Object.fromEntries(
    toolDefinitions.map((definition) => [
      definition.name,
      tool({
        description: definition.description,
        inputSchema: jsonSchema(definition.inputSchema as never),
        execute: async (_input: unknown, { toolCallId }) => {
          const value = outputs.get(toolCallId) ?? 'done';
          if (value instanceof Error) throw value;
          return value;
        },
      }),
    ]),
  );
  const manager = createContextManager({
    store,
    model: profile,
    maxInputTokens: budget,
    tools,
    instructions,
    summarizer: conversation.summarizer ? mockSummarizer : undefined,
    policy: { summary: { targetRatio: 1, reserveTokens: Math.min(2000, Math.floor(budget / 8)) } },
    tokenCounter,
    _internal: { now: () => 0 },
  });
  const model = modelPlaying(conversation, outputs);
  const given: ModelMessage[][] = [];
  const sent: ModelMessage[][] = [];
  let thrown: unknown = null;
  const agent = new ToolLoopAgent({
    model,
    instructions,
    tools,
    stopWhen: isStepCount(conversation.steps.length + 1),
    prepareStep: async (options) => {
      const messages = copy ? copyMessages(options.messages) : options.messages;
      try {
        const prepared = await manager.prepareStep({ ...options, messages });
        given.push(messages);
        sent.push(prepared?.messages ?? messages);
        return prepared;
      } catch (error) {
        thrown = error;
        throw error;
      }
    },
  });
  let awaitingApproval = false;
  try {
    const messages = initial
      ? await manager.initialMessages().catch((error: unknown) => {
          thrown = error;
          throw error;
        })
      : await convertToModelMessages(rows.map((row) => row.message) as ContextUIMessage[] as never);
    await agent.generate({ messages });
  } catch (error) {
    awaitingApproval = MissingToolResultsError.isInstance(error) && sent.length > 0 && awaitsApproval(sent.at(-1)!);
    if (thrown !== error && !awaitingApproval) throw error;
  }
  const refused = thrown instanceof ContextBudgetExceededError ? thrown : null;
  const calls = sent.map((messages, index) =>
    check(conversation, rows, given[index]!, messages, model.doGenerateCalls[index]?.prompt),
  );
  return {
    calls,
    refused,
    thrown: refused ? null : thrown,
    awaitingApproval,
    sent,
    prompts: model.doGenerateCalls.map((call) => call.prompt),
  };
}

/** A model that answers with the conversation's steps in turn (their calls run by the tools), then with a text. */
function modelPlaying(conversation: GeneratedConversation, outputs: Map<string, unknown>) {
  let index = 0;
  const usage = {
    inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  return new MockLanguageModelV4({
    // Every URL is the provider's to fetch: nothing is downloaded.
    supportedUrls: { '*/*': [/.*/] },
    doGenerate: async () => {
      const step = conversation.steps[index++];
      if (!step)
        return {
          content: [{ type: 'text', text: 'Done.' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      const content: LanguageModelV4Content[] = [];
      for (const message of step) {
        if (typeof message.content === 'string') continue;
        for (const part of message.content) {
          if (part.type === 'reasoning') content.push({ type: 'reasoning', text: part.text });
          else if (part.type === 'tool-call')
            content.push({
              type: 'tool-call',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              input: JSON.stringify(part.input),
            });
          else if (part.type === 'tool-result') outputs.set(part.toolCallId, outputValue(part.output));
        }
      }
      return { content, finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage, warnings: [] };
    },
  });
}

// What a tool returns (or throws) for a generated result.
function outputValue(output: { type: string; value?: unknown; reason?: string }): unknown {
  switch (output.type) {
    case 'error-text':
    case 'error-json':
      return new Error(typeof output.value === 'string' ? output.value : JSON.stringify(output.value));
    case 'execution-denied':
      return output.reason ?? 'denied';
    case 'content':
      return (output.value as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
    default:
      return output.value;
  }
}

// Whether an approval request of the messages has no response yet.
function awaitsApproval(messages: readonly ModelMessage[]): boolean {
  const requests = new Set<string>();
  for (const message of messages)
    if (typeof message.content !== 'string')
      for (const part of message.content)
        if (part.type === 'tool-approval-request') requests.add(part.approvalId);
        else if (part.type === 'tool-approval-response') requests.delete(part.approvalId);
  return requests.size > 0;
}

// Checks the messages `prepareStep` left and, when the model was called, the prompt it got (without one, the
// messages are checked in its place).
function check(
  conversation: GeneratedConversation,
  rows: readonly ContextMessage[],
  given: readonly ModelMessage[],
  sent: readonly ModelMessage[],
  modelPrompt: LanguageModelV4Prompt | undefined,
): AloneCall {
  const sentTokens = countSentTokens(sent as never, profile) + fixedTokens;
  const prompt = modelPrompt ?? (sent as LanguageModelV4Prompt);
  const newest = rows.findLast((row) => row.message.role === 'user')!;
  const textsOf = (row: ContextMessage) =>
    row.message.parts.filter((part) => part.type === 'text').map((part) => String(part.text));
  const userTexts = prompt
    .filter((message) => message.role === 'user')
    .map((message) => JSON.stringify(message.content));
  const newestText = JSON.stringify(textsOf(newest)[0]);
  return {
    overBudgetTokens: Math.max(0, sentTokens - conversation.maxInputTokens),
    splitPairs: [...toolPairProblems(sent), ...(modelPrompt ? promptPairProblems(modelPrompt) : [])],
    lostNewest: !userTexts.some((content) => content.includes(newestText)),
    lostPinned: rows
      .filter((row) => row.pinned && textsOf(row).some((value) => !sentWithBreakpoint(prompt, value)))
      .map((row) => row.sequence),
    firstRole: firstRoleAfterSummary(prompt as ModelMessage[]),
    reordered: reordered(toolIds(given), toolIds(sent)),
  };
}

// Whether a text part of the prompt holds the text (whole, or shortened to fit: its start) with the pinned
// message's cache breakpoint.
function sentWithBreakpoint(prompt: LanguageModelV4Prompt, value: string): boolean {
  const breakpoint = JSON.stringify(cacheBreakpoint);
  return prompt.some(
    (message) =>
      typeof message.content !== 'string' &&
      message.content.some(
        (part) =>
          part.type === 'text' &&
          (part.text === value || part.text.startsWith(value.slice(0, 40))) &&
          JSON.stringify(part.providerOptions) === breakpoint,
      ),
  );
}

// Every tool call and result id, in the order of the messages (`call:` or `result:` before the id).
function toolIds(messages: readonly ModelMessage[]): string[] {
  const ids: string[] = [];
  for (const message of messages)
    if (typeof message.content !== 'string')
      for (const part of message.content)
        if (part.type === 'tool-call') ids.push(`call:${part.toolCallId}`);
        else if (part.type === 'tool-result') ids.push(`result:${part.toolCallId}`);
  return ids;
}

// The ids of `sent` that were given and come before one given earlier than them.
function reordered(given: readonly string[], sent: readonly string[]): string[] {
  const position = new Map(given.map((id, index) => [id, index]));
  const problems: string[] = [];
  let last = -1;
  for (const id of sent) {
    const at = position.get(id);
    if (at === undefined) continue;
    if (at < last) problems.push(id);
    else last = at;
  }
  return problems;
}

// A result the model got without the call before it, or a call without its result (the last message excepted: an
// approval still awaiting the user's answer is sent without one).
function promptPairProblems(prompt: LanguageModelV4Prompt): string[] {
  const problems: string[] = [];
  const calls = new Set<string>();
  const open = new Map<string, number>();
  prompt.forEach((message, index) => {
    if (typeof message.content === 'string') return;
    for (const part of message.content) {
      if (part.type === 'tool-call') {
        calls.add(part.toolCallId);
        if (part.providerExecuted !== true) open.set(part.toolCallId, index);
      } else if (part.type === 'tool-result') {
        if (!calls.has(part.toolCallId)) problems.push(`prompt: result without call: ${part.toolCallId}`);
        open.delete(part.toolCallId);
      }
    }
  });
  const lastAssistant = prompt.findLastIndex((message) => message.role === 'assistant');
  for (const [id, index] of open)
    if (index !== lastAssistant || lastAssistant !== prompt.length - 1)
      problems.push(`prompt: call without result: ${id}`);
  return problems;
}
