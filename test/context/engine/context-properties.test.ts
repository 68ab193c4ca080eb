import type { ModelMessage } from '@ai-sdk/provider-utils';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, describe, expect, it } from 'vitest';
import { createOfflineSummarizer } from '../../../src/ai-sdk/summarizers/offline-summarizer.js';
import {
  ContextBudgetExceededError,
  countStoredMessageTokens,
  createContextEngine,
  defaultContextPolicy,
  resolveModelProfile,
  storedTokenCountId,
  type ContextSummarizer,
  type ModelProfile,
} from '../../../src/context/index.js';
import { convertToContextSegments } from '../../../src/context/stages/convert-to-context-segments.js';
import { estimateSegments } from '../../../src/context/segments/context-segment.js';
import { createContextMeasure } from '../../../src/tokens/context-measure.js';
import { filterStoredMessages } from '../../../src/context/stages/filter-stored-messages.js';
import { pruneContext } from '../../../src/context/stages/prune-context.js';
import { selectContext } from '../../../src/context/stages/select-context.js';
import { trimContext } from '../../../src/context/stages/trim-context.js';
import { validateStoredMessages } from '../../../src/context/stages/validate-stored-messages.js';
import type { ContextUIMessage, ContextUIPart } from '../../../src/model/context-ui-message.js';
import type { ContextMessage } from '../../../src/model/context-store.js';
import { createMemoryContextStore } from '../../../src/testing/index.js';
import { copyMessages } from '../../support/copy-messages.js';
import { countSentTokens } from '../../support/count-sent-tokens.js';
import { tokenCounter } from '../fixtures.js';

/** Default number of generated conversations per property; PROPERTY_RUNS raises it. */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 800);
const casesRun = { engine: 0, step: 0, stages: 0 };
/** Generous on a loaded two-core machine: about 10 ms a case is typical, 60 ms the worst seen. */
const timeout = 60_000 + RUNS * 150;
afterAll(() => {
  console.log(
    `context property cases run: ${casesRun.engine} engine, ${casesRun.step} prepareStep, ${casesRun.stages} stage (total ${casesRun.engine + casesRun.step + casesRun.stages})`,
  );
});

// Large payloads from a fixed pool (about 200 KB each), so their counts are cached between cases.
const bigJson = {
  rows: Array.from({ length: 2400 }, (_row, index) => ({
    id: index,
    name: `item ${index}`,
    tags: ['alpha', 'beta'],
    note: 'lorem ipsum dolor sit amet, consectetur adipiscing elit',
  })),
};
const bigCode = Array.from(
  { length: 4000 },
  (_line, index) =>
    `export function compute${index}(value: number): number {\n  return value * ${index} + Math.sqrt(${index});\n}`,
).join('\n');
const bigChinese =
  '今天我们讨论项目的进度，以及下一步的计划。会议记录如下：第一，完成接口设计；第二，补充测试用例。'.repeat(1500);
const snippets = [
  'Can you check the weather in Paris for tomorrow?',
  'Please summarize the report and list the open questions.',
  'The deployment failed with exit code 137 after 4 minutes.',
  '你好，请帮我查一下明天北京的天气。',
  '我们需要在周五之前完成第二阶段的测试。',
  '```ts\nconst response = await fetch(url, { method: "POST" });\n```',
  'def handler(event):\n    return {"status": 200, "body": event["id"]}',
  'Remember that my budget is 3,000 EUR and I prefer trains.',
  'OK.',
];
const text = fc.array(fc.constantFrom(...snippets), { minLength: 1, maxLength: 5 }).map((parts) => parts.join(' '));
const smallOutput = fc.oneof(fc.record({ tempC: fc.integer({ min: -20, max: 40 }), summary: text }), text);
const output = fc.oneof(
  { weight: 12, arbitrary: smallOutput },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(bigJson, bigCode, bigChinese) },
);
const toolState = fc.constantFrom(
  'output-available',
  'output-available',
  'output-available',
  'output-error',
  'output-denied',
  'approved',
  'denied',
  'input-available',
  'approval-requested',
  'preliminary',
);
const tool = fc.record({
  name: fc.constantFrom('weather', 'search', 'readFile', 'deploy'),
  state: toolState,
  output,
  input: fc.record({ query: fc.constantFrom('paris', 'report', 'build 42') }),
});
const step = fc.record({
  reasoning: fc.option(text, { nil: undefined }),
  tools: fc.array(tool, { maxLength: 2 }),
  text: fc.option(text, { nil: undefined }),
});
const turn = fc.record({
  user: text,
  userPinned: fc.integer({ min: 0, max: 7 }).map((value) => value === 0),
  image: fc.integer({ min: 0, max: 4 }).map((value) => value === 0),
  steps: fc.array(step, { minLength: 0, maxLength: 3 }),
  assistantPinned: fc.integer({ min: 0, max: 12 }).map((value) => value === 0),
  status: fc.constantFrom('completed', 'completed', 'completed', 'completed', 'cancelled', 'failed', 'streaming'),
  contextState: fc.constantFrom('eligible', 'eligible', 'eligible', 'eligible', 'eligible', 'excluded', 'redacted'),
  deleted: fc.integer({ min: 0, max: 20 }).map((value) => value === 0),
  storedCount: fc.integer({ min: 0, max: 5 }).map((value) => value > 0),
});
const conversation = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 10 }),
  lastHasAssistant: fc.integer({ min: 0, max: 4 }).map((value) => value === 0),
  contextWindow: fc.integer({ min: 9000, max: 40_000 }),
  summarizer: fc.constantFrom('none', 'offline', 'failing'),
  toolTraffic: fc.constantFrom('when-over-budget', 'outside-newest-turns', 'none'),
  memory: fc.constantFrom('off', 'search'),
});
type Conversation = typeof conversation extends fc.Arbitrary<infer VALUE> ? VALUE : never;

/**
 * Builds stored messages from a generated conversation. The newest user message is always eligible; at most two
 * messages are pinned and a pinned user message has no image, so that what may never be cut (pinned messages and
 * the newest turn) always fits the smallest generated window.
 */
function build(value: Conversation): ContextMessage[] {
  let callNumber = 0;
  let pinnedLeft = 2;
  const rows: ContextMessage[] = [];
  const turns = value.turns.map((generated) => {
    const userPinned = generated.userPinned && pinnedLeft-- > 0;
    const assistantPinned = generated.assistantPinned && pinnedLeft-- > 0;
    return { ...generated, userPinned, assistantPinned, image: generated.image && !userPinned };
  });
  turns.forEach((generated, index) => {
    const last = index === turns.length - 1;
    const userParts: ContextUIPart[] = [{ type: 'text', text: generated.user }];
    if (generated.image) userParts.push({ type: 'file', mediaType: 'image/png', url: 'https://example.com/photo.png' });
    const userMessage: ContextUIMessage = { id: `u${index}`, role: 'user', parts: userParts };
    rows.push(
      row(rows.length + 1, userMessage, last ? { pinned: generated.userPinned } : generated, generated.storedCount),
    );
    if (last && !value.lastHasAssistant) return;
    if (generated.steps.length === 0) return;
    const parts: ContextUIPart[] = [];
    for (const generatedStep of generated.steps) {
      parts.push({ type: 'step-start' });
      if (generatedStep.reasoning) parts.push({ type: 'reasoning', text: generatedStep.reasoning });
      for (const generatedTool of generatedStep.tools) parts.push(toolPart(generatedTool, `call-${++callNumber}`));
      if (generatedStep.text) parts.push({ type: 'text', text: generatedStep.text });
    }
    const assistantMessage: ContextUIMessage = { id: `a${index}`, role: 'assistant', parts };
    rows.push(
      row(
        rows.length + 1,
        assistantMessage,
        last
          ? { pinned: generated.assistantPinned, status: 'completed' }
          : { ...generated, pinned: generated.assistantPinned },
        generated.storedCount,
      ),
    );
  });
  return rows;
}

function row(
  sequence: number,
  message: ContextUIMessage,
  generated: { pinned?: boolean; userPinned?: boolean; status?: string; contextState?: string; deleted?: boolean },
  storedCount: boolean,
): ContextMessage {
  return {
    sequence,
    message,
    status: (message.role === 'assistant'
      ? (generated.status ?? 'completed')
      : 'completed') as ContextMessage['status'],
    contextState: (generated.contextState ?? 'eligible') as ContextMessage['contextState'],
    pinned: generated.pinned ?? generated.userPinned ?? false,
    tokenCount: storedCount ? countStoredMessageTokens({ message, tokenCounter }) : null,
    tokenCounterId: storedCount ? storedTokenCountId(tokenCounter) : null,
    deletedAt: generated.deleted ? new Date(0) : null,
  };
}

function toolPart(
  generated: { name: string; state: string; output: unknown; input: unknown },
  toolCallId: string,
): ContextUIPart {
  const base = { type: `tool-${generated.name}`, toolCallId, input: generated.input };
  switch (generated.state) {
    case 'output-error':
      return { ...base, state: 'output-error', errorText: 'upstream timeout' };
    case 'output-denied':
      return {
        ...base,
        state: 'output-denied',
        approval: { id: `ap-${toolCallId}`, approved: false, reason: 'not allowed' },
      };
    case 'approved':
      return { ...base, state: 'approval-responded', approval: { id: `ap-${toolCallId}`, approved: true } };
    case 'denied':
      return { ...base, state: 'approval-responded', approval: { id: `ap-${toolCallId}`, approved: false } };
    case 'approval-requested':
      return { ...base, state: 'approval-requested', approval: { id: `ap-${toolCallId}` } };
    case 'input-available':
      return { ...base, state: 'input-available' };
    case 'preliminary':
      return { ...base, state: 'output-available', output: generated.output, preliminary: true };
    default:
      return { ...base, state: 'output-available', output: generated.output };
  }
}

// Exact o200k without the guard, for the instructions and tool definitions.
const stringCounts = new Map<string, number>();
const exact = (value: string) => {
  if (value.length < 512) return countTokens(value, { disallowedSpecial: new Set() });
  let count = stringCounts.get(value);
  if (count === undefined) stringCounts.set(value, (count = countTokens(value, { disallowedSpecial: new Set() })));
  return count;
};
/** The independent count of the messages as sent (test/support/count-sent-tokens.ts). */
function exactPromptTokens(messages: readonly ModelMessage[], profile: ModelProfile): number {
  return countSentTokens(messages as never, profile);
}

/** Problems with tool pairing the AI SDK or a provider would reject; empty when the messages are valid. */
function toolPairProblems(messages: readonly ModelMessage[]): string[] {
  const problems: string[] = [];
  const calls = new Set<string>();
  const open = new Set<string>();
  const approvals = new Map<string, string>();
  const approved = new Set<string>();
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
        if (!approvals.has(part.approvalId)) problems.push(`approval response without request: ${part.approvalId}`);
        else {
          awaiting.delete(approvals.get(part.approvalId)!);
          if (part.approved) approved.add(approvals.get(part.approvalId)!);
        }
      }
    }
  }
  // A call whose approval still awaits its answer (after the newest user message) stays open, as in the AI SDK.
  for (const id of open) if (!approved.has(id) && !awaiting.has(id)) problems.push(`call without result: ${id}`);
  return problems;
}

const failing: ContextSummarizer = {
  id: 'failing',
  summarize: async () => {
    throw new Error('down');
  },
};
const instructions = 'You are a careful assistant. Answer briefly and use the tools when needed.';
const toolDefinitions = [
  {
    name: 'weather',
    description: 'Get the weather',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
  },
  {
    name: 'search',
    description: 'Search the web',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
  },
];
const exactFixed = (profile: ModelProfile) =>
  exact(instructions) +
  profile.perMessageTokens +
  toolDefinitions.reduce(
    (sum, tool) => sum + exact(tool.name) + exact(tool.description) + exact(JSON.stringify(tool.inputSchema)),
    0,
  ) +
  toolDefinitions.length * profile.perToolTokens +
  profile.toolsPreambleTokens;

async function runEngine(value: Conversation) {
  const rows = build(value);
  const store = createMemoryContextStore({ messages: rows });
  const profile = resolveModelProfile({
    modelId: 'gpt-4o',
    overrides: { contextWindow: value.contextWindow, maxOutputTokens: 1000 },
  });
  const summarizer =
    value.summarizer === 'offline' ? createOfflineSummarizer() : value.summarizer === 'failing' ? failing : undefined;
  const engine = createContextEngine({
    store,
    profile,
    summarizer,
    tokenCounter,
    instructions,
    toolDefinitions,
    policy: {
      summary: { reserveTokens: 400 },
      prune: { toolTraffic: value.toolTraffic },
      memory: { mode: value.memory },
    },
  });
  const { messages, report } = await engine.buildInitialContext();
  return { rows, store, profile, engine, messages, report };
}

function checkContext(
  rows: readonly ContextMessage[],
  messages: readonly ModelMessage[],
  profile: ModelProfile,
  overBudgetTokens: number,
) {
  // Never over budget, by the exact tokenizer (with the margin and the output reserve).
  expect(overBudgetTokens).toBe(0);
  const margin = Math.ceil(profile.contextWindow * profile.safetyMarginRatio);
  expect(exactPromptTokens(messages, profile) + exactFixed(profile) + margin + 1000).toBeLessThanOrEqual(
    profile.contextWindow,
  );
  // No orphan tool call, result or approval.
  expect(toolPairProblems(messages)).toEqual([]);
  // An approval awaiting its answer in the newest turn is sent as it is, never closed with an invented result.
  const newestUserSequence = Math.max(
    ...rows
      .filter((row) => row.message.role === 'user' && row.contextState === 'eligible' && !row.deletedAt)
      .map((row) => row.sequence),
  );
  const sent = JSON.stringify(messages);
  for (const row of rows) {
    if (row.sequence < newestUserSequence || row.message.role !== 'assistant' || row.status === 'streaming') continue;
    if (row.contextState !== 'eligible' || row.deletedAt) continue;
    for (const part of row.message.parts)
      if (part.state === 'approval-requested') {
        expect(sent).toContain(`"approvalId":"${(part.approval as { id: string }).id}"`);
        expect(sent).not.toContain(
          `"toolCallId":"${part.toolCallId}","toolName":"${String(part.type).slice(5)}","output"`,
        );
      }
  }
  // Never a system message, never empty.
  expect(messages.length).toBeGreaterThan(0);
  expect(messages.some((message) => message.role === 'system')).toBe(false);
  // The newest user input and every pinned eligible message are there.
  const visible = rows.filter((stored) => stored.contextState === 'eligible' && stored.deletedAt === null);
  const newestUser = visible.filter((stored) => stored.message.role === 'user').at(-1)!;
  const userTexts = messages
    .filter((message) => message.role === 'user')
    .map((message) => JSON.stringify(message.content));
  const textOf = (stored: ContextMessage) =>
    JSON.stringify(
      stored.message.parts.filter((part) => part.type === 'text').map((part) => ({ type: 'text', text: part.text })),
    );
  expect(userTexts.some((content) => content.startsWith(textOf(newestUser).slice(0, -1)))).toBe(true);
  const allText = JSON.stringify(messages);
  for (const pinned of visible.filter(
    (stored) => stored.pinned && (stored.message.role === 'user' || stored.status !== 'streaming'),
  )) {
    for (const part of pinned.message.parts)
      if (part.type === 'text') expect(allText).toContain(JSON.stringify(part.text).slice(1, -1));
  }
}

describe('context engine properties', () => {
  it(
    'should fit the budget exactly, never orphan a tool call, keep the newest input and pinned messages, and accept its own output',
    async () => {
      await fc.assert(
        fc.asyncProperty(conversation, async (value) => {
          casesRun.engine += 1;
          const { rows, profile, engine, messages, report } = await runEngine(value);
          const trim = report.stages.find((stage) => stage.stage === 'trim')!;
          checkContext(rows, messages, profile, trim.stage === 'trim' ? trim.overBudgetTokens : 0);
          // prepareStep is idempotent on what the engine built (AI SDK carries messages forward). Given the very
          // messages, it does not compact them again; given copies, it does, and finds nothing to change.
          const same = await engine.prepareStep({ messages, stepNumber: 0, instructions });
          expect(same.messages).toBeUndefined();
          expect(same.report.stages).toEqual([]);
          const copies = await engine.prepareStep({ messages: copyMessages(messages), stepNumber: 0, instructions });
          expect(copies.messages).toBeUndefined();
          expect(copies.report.stages.map((stage) => stage.stage)).toContain('trim');
          // Everything else the two report is the same (the repeated step ran no stage, and took no time).
          const rest = ({ stages: _stages, durationMs: _durationMs, ...report }: typeof same.report) => report;
          expect(rest(copies.report)).toEqual(rest(same.report));
        }),
        { numRuns: RUNS, seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
      );
    },
    timeout,
  );

  it(
    'should keep every step of a tool loop within budget and return undefined for its own output',
    async () => {
      const responses = fc.array(fc.record({ name: fc.constantFrom('weather', 'search'), output }), {
        minLength: 1,
        maxLength: 3,
      });
      await fc.assert(
        fc.asyncProperty(conversation, responses, async (value, steps) => {
          casesRun.step += 1;
          const { rows, profile, engine, messages: initial } = await runEngine({ ...value, lastHasAssistant: false });
          let messages = initial;
          for (const [index, response] of steps.entries()) {
            const toolCallId = `step-call-${index}`;
            const resultOutput =
              typeof response.output === 'string'
                ? { type: 'text' as const, value: response.output }
                : { type: 'json' as const, value: response.output as never };
            messages = [
              ...messages,
              {
                role: 'assistant',
                content: [{ type: 'tool-call', toolCallId, toolName: response.name, input: { query: 'paris' } }],
              },
              {
                role: 'tool',
                content: [{ type: 'tool-result', toolCallId, toolName: response.name, output: resultOutput }],
              },
            ];
            const prepared = await engine.prepareStep({ messages, stepNumber: index + 1, instructions });
            messages = prepared.messages ?? messages;
            checkContext(
              rows,
              messages,
              profile,
              (prepared.report.stages.find((stage) => stage.stage === 'trim') as { overBudgetTokens: number })
                .overBudgetTokens,
            );
            expect(
              (await engine.prepareStep({ messages, stepNumber: index + 1, instructions })).messages,
            ).toBeUndefined();
            // The very messages are not compacted again; copies are, and must come back unchanged too.
            const again = await engine.prepareStep({
              messages: copyMessages(messages),
              stepNumber: index + 1,
              instructions,
            });
            expect(again.messages).toBeUndefined();
            expect(again.report.changed).toBe(false);
          }
        }),
        { numRuns: Math.ceil(RUNS / 2) },
      );
    },
    timeout,
  );

  it(
    'should make every stage idempotent: stage(stage(x)) equals stage(x)',
    () => {
      fc.assert(
        fc.property(conversation, fc.integer({ min: 200, max: 30_000 }), (value, messageBudget) => {
          casesRun.stages += 1;
          const rows = build(value);
          const measure = createContextMeasure({ tokenCounter, profile: resolveModelProfile({ modelId: 'gpt-4o' }) });
          const validated = validateStoredMessages({ messages: rows }).messages;
          expect(validateStoredMessages({ messages: validated }).messages).toEqual(validated);
          const filtered = filterStoredMessages({ messages: validated }).messages;
          expect(filterStoredMessages({ messages: filtered }).messages).toEqual(filtered);
          const segments = convertToContextSegments({ messages: filtered, measure }).segments;
          const prunePolicy = { ...defaultContextPolicy.prune, toolTraffic: value.toolTraffic };
          const pruned = pruneContext({ segments, measure, messageBudget, policy: prunePolicy }).segments;
          expect(pruneContext({ segments: pruned, measure, messageBudget, policy: prunePolicy }).segments).toEqual(
            pruned,
          );
          const selected = selectContext({
            segments: pruned,
            measure,
            messageBudget,
            targetTokens: Math.floor(messageBudget * 0.7),
          }).segments;
          expect(
            selectContext({ segments: selected, measure, messageBudget, targetTokens: Math.floor(messageBudget * 0.7) })
              .segments,
          ).toEqual(selected);
          let trimmed: ReturnType<typeof trimContext>['segments'];
          try {
            trimmed = trimContext({
              segments: pruned,
              measure,
              messageBudget,
              preview: defaultContextPolicy.toolOutputPreview,
            }).segments;
          } catch (error) {
            // Only when what may never be cut (the newest user message, pinned messages) alone is over the budget.
            expect(error).toBeInstanceOf(ContextBudgetExceededError);
            const { requiredTokens } = error as ContextBudgetExceededError;
            expect(requiredTokens).toBeGreaterThan(messageBudget);
            return;
          }
          expect(estimateSegments(trimmed, measure)).toBeLessThanOrEqual(messageBudget);
          expect(
            trimContext({ segments: trimmed, measure, messageBudget, preview: defaultContextPolicy.toolOutputPreview })
              .segments,
          ).toEqual(trimmed);
        }),
        { numRuns: RUNS },
      );
    },
    timeout,
  );
});
