// What the tests of the carried cut (`policy.summary.startFrom`) share: an engine over a memory store on the
// generated-context profile, with its reports; the rebuild check of every snapshot written; and a hand-written thread
// of tool calls whose ids the test chooses (a provider may reuse them).
import type { UIMessage } from 'ai';
import {
  countStoredPartTokens,
  createContextEngine,
  storedTokenCountId,
  rebuildContextFromSnapshot,
  type ContextPolicyInput,
  type ContextReport,
  type ContextSummarizer,
  type ContextSummarizerInput,
} from '../../src/context/index.js';
import type { MemoryContextStore } from '../../src/testing/index.js';
import type { TokenCounter } from '../../src/tokens/token-counter.js';
import { instructions, mockSummarizer, profile, toolDefinitions } from './check-generated-context.js';
import { tokenCounter as fixtureCounter } from '../context/fixtures.js';

/** Stores a message as the store writes it: with its count and per-part counts. */
export function appendCounted(
  store: MemoryContextStore,
  message: UIMessage,
  tokenCounter: TokenCounter,
  pinned = false,
): void {
  const partTokenCounts = countStoredPartTokens({ message: message as never, tokenCounter });
  const tokenCount = partTokenCounts.reduce((sum, count) => sum + count, 0);
  const tokenCounterId = storedTokenCountId(tokenCounter);
  store.appendMessage({ message: message as never, tokenCount, tokenCounterId, partTokenCounts, pinned });
}

/** A budget a whole generated thread fits in. */
export const BIG = 1_000_000;

/** The deterministic summarizer, keeping every input it was given in `inputs`. */
export const capturingSummarizer = (inputs: ContextSummarizerInput[]): ContextSummarizer => ({
  id: 'capture',
  summarize: (input) => (inputs.push(input), mockSummarizer.summarize(input)),
});

/** An engine for one request on `store`, and the reports it emits. */
export function engineFor(
  store: MemoryContextStore,
  {
    budget = BIG,
    summarize = false,
    summarizer = summarize ? mockSummarizer : undefined,
    policy = {},
    tokenCounter = fixtureCounter,
  }: {
    budget?: number;
    summarize?: boolean;
    summarizer?: ContextSummarizer;
    policy?: ContextPolicyInput;
    tokenCounter?: TokenCounter;
  } = {},
) {
  const reports: ContextReport[] = [];
  const engine = createContextEngine({
    store,
    profile,
    tokenCounter,
    instructions,
    toolDefinitions,
    maxInputTokens: budget,
    ...(summarizer ? { summarizer } : {}),
    policy,
    onReport: (report) => reports.push(report),
  });
  return { engine, reports };
}

/** `rebuildContextFromSnapshot` of the store's snapshot of `version`, with its summary, from the log as it is now. */
export function rebuildOf(store: MemoryContextStore, version: number, policy?: ContextPolicyInput) {
  const snapshot = store.snapshots.find((candidate) => candidate.version === version)!;
  const summary = store.summaries.find((candidate) => candidate.id === snapshot.summaryId) ?? null;
  return rebuildContextFromSnapshot({
    snapshot,
    summary,
    messages: store.messages,
    tokenCounter: fixtureCounter,
    policy,
  });
}

/** Whether each snapshot written after the first `from` rebuilds exactly what was sent. */
export const rebuildsFrom = (store: MemoryContextStore, from: number, policy?: ContextPolicyInput) =>
  store.snapshots.slice(from).map((snapshot) => rebuildOf(store, snapshot.version, policy).matches);

const rows = (count: number) =>
  Array.from({ length: count }, (_, row) => `row id=${row} status=ok note=lorem ipsum dolor sit amet`).join('\n');

/** Writes a thread message by message into `store`: questions, and answers of steps with the calls the test names. */
export function handWrittenThread(store: MemoryContextStore) {
  const add = (message: unknown) => appendCounted(store, message as UIMessage, fixtureCounter);
  return {
    rows,
    /** A finished search call of `lines` rows of output. */
    search: (toolCallId: string, lines: number) => ({
      type: 'tool-search',
      toolCallId,
      state: 'output-available',
      input: { query: toolCallId },
      output: rows(lines),
    }),
    ask: (id: string, text: string) => add({ id, role: 'user', parts: [{ type: 'text', text }] }),
    answer: (id: string, ...steps: unknown[][]) =>
      add({ id, role: 'assistant', parts: steps.flatMap((parts) => [{ type: 'step-start' }, ...parts]) }),
  };
}
