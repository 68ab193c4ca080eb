// W4: how long `prepareStep` takes (no summarizer call) on long conversations whose messages carry stored token
// counts, against a baseline that recounts every message on every step.
//
//   npx tsx bench/prepare-step.ts                 # sizes 50, 600 and 2000 messages
//   BENCH_SIZES=600 npx tsx bench/prepare-step.ts
//
// Importable: `runPrepareStepBench({ sizes })` returns the results (bench/run.ts records them as W4).
import { pathToFileURL } from 'node:url';
import type { ModelMessage } from '@ai-sdk/provider-utils';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { createContextManager } from '../src/ai-sdk/context-manager/create-context-manager.js';
import { countStoredMessageTokens, storedTokenCountId } from '../src/context/index.js';
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import type { ContextUIMessage } from '../src/model/context-ui-message.js';
import { createMemoryContextStore } from '../src/testing/index.js';

/** Options of {@link runPrepareStepBench}. */
export interface PrepareStepBenchOptions {
  /** Conversation sizes in stored messages (each turn is one user and one assistant message). */
  sizes: number[];
  /**
   * Tool-loop steps measured per size.
   * @default 25
   */
  steps?: number;
  /**
   * Steps of the recount-everything baseline (it is slow on large threads).
   * @default 5
   */
  baselineSteps?: number;
}

/** One measured configuration. */
export interface PrepareStepBenchResult {
  /** Stored messages in the thread. */
  messages: number;
  /** Their raw o200k tokens (the sum of the stored counts). */
  storedTokens: number;
  /** `fits`: gpt-4.1 (1M window), nothing is cut; `compacted`: gpt-4o (128k), the context is trimmed to fit. */
  scenario: 'fits' | 'compacted';
  /** Model messages handed to prepareStep at the first measured step. */
  stepMessages: number;
  /** Median milliseconds of prepareStep over the measured steps (each adds a tool call and its result). */
  medianMs: number;
  /** 95th percentile. */
  p95Ms: number;
  /** Median milliseconds of the baseline: recount every message with the tokenizer on every step. */
  baselineMedianMs: number;
  /** baselineMedianMs / medianMs. */
  speedup: number;
}

// Varied, seeded content: repeated strings would let the tokenizer's own cache flatter the baseline.
function createRandom(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
const random = createRandom(42);
const syllables = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tas',
  'vo',
  'qui',
  'bel',
  'dor',
  'fen',
  'gar',
  'hul',
  'jin',
  'pra',
  'sto',
  'zel',
];
const vocabulary = Array.from({ length: 3000 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]).join(
    '',
  ),
);
const sentence = (words: number) =>
  Array.from({ length: words }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');

function turn(index: number): ContextUIMessage[] {
  const region = `region ${index % 17}`;
  const output = {
    query: region,
    items: Array.from({ length: 8 }, (_item, item) => ({
      id: `${index}-${item}`,
      title: sentence(4),
      score: Math.round(random() * 1000) / 10,
      snippet: sentence(10),
    })),
  };
  const code = Array.from(
    { length: 6 },
    (_line, line) =>
      `  const ${vocabulary[Math.floor(random() * vocabulary.length)]}${line} = await load("${sentence(2)}", ${Math.floor(random() * 1000)});`,
  ).join('\n');
  return [
    {
      id: `u${index}`,
      role: 'user',
      parts: [{ type: 'text', text: `Question ${index} about ${region}: ${sentence(25)}?` }],
    },
    {
      id: `a${index}`,
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: sentence(25) },
        {
          type: 'tool-search',
          toolCallId: `call-${index}`,
          state: 'output-available',
          input: { query: `figures ${region}`, limit: 8 },
          output,
        },
        { type: 'step-start' },
        { type: 'text', text: `${sentence(34)}\n\n\`\`\`ts\nasync function compare() {\n${code}\n}\n\`\`\`` },
      ],
    },
  ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const percentile = (values: number[], share: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * share))]!;

/** The baseline: what a counter without stored counts or memoisation does on every step. */
function recountEverything(messages: readonly ModelMessage[]): number {
  const count = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
  let total = 0;
  for (const message of messages) {
    if (typeof message.content === 'string') {
      total += count(message.content);
      continue;
    }
    for (const part of message.content as Array<Record<string, any>>) {
      if (part.type === 'text' || part.type === 'reasoning') total += count(part.text);
      else if (part.type === 'tool-call') total += count(part.toolName) + count(JSON.stringify(part.input));
      else if (part.type === 'tool-result') total += count(part.toolName) + count(JSON.stringify(part.output.value));
    }
  }
  return total;
}

async function measure(
  size: number,
  scenario: PrepareStepBenchResult['scenario'],
  steps: number,
  baselineSteps: number,
): Promise<PrepareStepBenchResult> {
  const tokenCounter = await loadO200kTokenCounter();
  const store = createMemoryContextStore();
  let storedTokens = 0;
  for (let index = 0; store.messages.length < size; index++) {
    for (const message of turn(index)) {
      if (store.messages.length >= size) break;
      const tokenCount = countStoredMessageTokens({ message, tokenCounter });
      storedTokens += tokenCount;
      store.appendMessage({ message, tokenCount, tokenCounterId: storedTokenCountId(tokenCounter) });
    }
  }
  if (store.messages.at(-1)!.message.role !== 'user')
    store.appendMessage({
      message: { id: 'last', role: 'user', parts: [{ type: 'text', text: 'And what about next quarter?' }] },
    });
  const manager = createContextManager({
    store,
    model: scenario === 'fits' ? 'openai:gpt-4.1' : 'openai:gpt-4o',
    maxOutputTokens: 8192,
    instructions: 'You are an analyst. Cite sources.',
    tokenCounter,
  });
  const initial = await manager.initialMessages();
  const instructions = 'You are an analyst. Cite sources.';
  const call = (messages: ModelMessage[], stepNumber: number) =>
    manager.prepareStep({
      messages,
      stepNumber,
      steps: [],
      instructions,
      initialInstructions: instructions,
      initialMessages: initial,
      responseMessages: [],
      runtimeContext: {},
      toolsContext: {},
      model: 'openai/gpt-4o',
    } as never);
  let messages: ModelMessage[] = initial;
  const times: number[] = [];
  const stepMessages: ModelMessage[][] = [];
  const warmup = 10;
  for (let step = 1; step <= steps + warmup; step++) {
    const toolCallId = `live-${step}`;
    messages = [
      ...messages,
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId, toolName: 'search', input: { query: `follow-up ${step}` } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId,
            toolName: 'search',
            output: {
              type: 'json',
              value: { step, items: Array.from({ length: 8 }, () => ({ title: sentence(4), snippet: sentence(18) })) },
            },
          },
        ],
      },
    ];
    stepMessages.push(messages);
    const started = performance.now();
    const result = await call(messages, step);
    const elapsed = performance.now() - started;
    if (result?.messages) messages = result.messages;
    if (step > warmup) times.push(elapsed); // the first steps warm up the JIT
  }
  const baselineTimes = stepMessages.slice(warmup, warmup + baselineSteps).map((stepInput) => {
    const started = performance.now();
    recountEverything(stepInput);
    return performance.now() - started;
  });
  const medianMs = median(times);
  const baselineMedianMs = median(baselineTimes);
  return {
    messages: store.messages.length,
    storedTokens,
    scenario,
    stepMessages: stepMessages[warmup]!.length,
    medianMs: round(medianMs),
    p95Ms: round(percentile(times, 0.95)),
    baselineMedianMs: round(baselineMedianMs),
    speedup: round(baselineMedianMs / medianMs),
  };
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/**
 * Measures prepareStep for each size, in two scenarios: `fits` (gpt-4.1, the whole thread is sent) and
 * `compacted` (gpt-4o, the thread is trimmed to 128k first). Returns one result per size and scenario.
 */
export async function runPrepareStepBench({
  sizes,
  steps = 25,
  baselineSteps = 5,
}: PrepareStepBenchOptions): Promise<PrepareStepBenchResult[]> {
  const results: PrepareStepBenchResult[] = [];
  for (const size of sizes) {
    for (const scenario of ['fits', 'compacted'] as const)
      results.push(await measure(size, scenario, steps, baselineSteps));
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sizes = (process.env.BENCH_SIZES ?? '50,600,2000').split(',').map(Number);
  const results = await runPrepareStepBench({ sizes });
  console.log(
    'messages  stored tokens  scenario   step messages  prepareStep median (p95)  recount-all baseline  speedup',
  );
  for (const result of results) {
    console.log(
      `${String(result.messages).padStart(8)}  ${String(result.storedTokens).padStart(13)}  ${result.scenario.padEnd(9)}  ${String(result.stepMessages).padStart(13)}  ${`${result.medianMs.toFixed(3)} ms (${result.p95Ms.toFixed(3)})`.padStart(24)}  ${`${result.baselineMedianMs.toFixed(1)} ms`.padStart(20)}  ${`${result.speedup.toFixed(0)}x`.padStart(7)}`,
    );
  }
}
