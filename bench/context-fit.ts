// `npm run bench:context-fit`: runs the context engine on generated agent conversations (test/support/
// agent-conversations.ts, the generator the CI-size property tests use) and checks every prepared model call
// against the context engine's rules: over budget, split calls or approvals, lost newest input or pinned messages,
// invented results, snapshots that do not rebuild, a first message that is not the user's, utilisation of the budget
// (targetRatio 1) over the calls whose history exceeded it before any stage ran, and the time per call. Most
// conversations have memory from outside the thread (of random sizes, up to more than the budget): it must come
// first, whole and in order, and leave the history exactly as the same call without memory.
// No database: the engine runs on the in-memory store. Environment: CONTEXT_FIT_CONVERSATIONS (default 100000),
// CONTEXT_FIT_SEED (first seed, default 1), CONTEXT_FIT_WORKERS (processes, default 2, one
// per core), CONTEXT_FIT_MAX_MESSAGES (default 2000), CONTEXT_FIT_POLICY (`default`: the engine's default policy,
// cut to its low-water mark with fixed previews, instead of the budget-filling one; `fixed-previews`: cut to the
// budget, with the default fixed-size previews; the rules checked are the same).
// Prints a JSON summary and a Markdown table.
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadO200kTokenCounter } from '../src/tokens/token-counter.js';
import { generateConversation } from '../test/support/agent-conversations.js';
import { runGeneratedConversation } from '../test/support/check-generated-context.js';
import { defaultContextPolicy } from '../src/context/index.js';

const policy =
  process.env.CONTEXT_FIT_POLICY === 'default'
    ? {
        summary: { targetRatio: defaultContextPolicy.summary.targetRatio },
        toolOutputPreview: { sizing: defaultContextPolicy.toolOutputPreview.sizing },
      }
    : process.env.CONTEXT_FIT_POLICY === 'fixed-previews'
      ? { toolOutputPreview: { sizing: defaultContextPolicy.toolOutputPreview.sizing } }
      : {};
import { rememberingTokenCounter, withStoredCounts } from '../test/support/stored-counts.js';
import { round } from './stats.js';

interface Tally {
  conversations: number;
  calls: number;
  refused: number;
  overBudget: number;
  maxOverBudgetTokens: number;
  splitPairs: number;
  lostNewest: number;
  lostPinned: number;
  invented: number;
  snapshotsWritten: number;
  snapshotsInexact: number;
  firstNotUser: number;
  /** Calls with memory out of place, cut, out of order or kept past a dropped item. */
  memoryMisplaced: number;
  /** Calls whose other messages differ from the same call without memory (memory took room from the history). */
  memoryDisplacedHistory: number;
  /** Calls compared with the same call without memory. */
  memoryCompared: number;
  /** Utilisation of calls whose history exceeded the budget before any stage ran, in permille buckets 0..1000. */
  utilisation: number[];
  /** Utilisation of calls where select, summarize or trim cut something, in permille buckets 0..1000. */
  utilisationCut: number[];
  /** Per-call time, in 0.1 ms buckets up to 10 s. */
  callMs: number[];
  examples: Array<{ seed: number; problem: string }>;
}

const emptyTally = (): Tally => ({
  conversations: 0,
  calls: 0,
  refused: 0,
  overBudget: 0,
  maxOverBudgetTokens: 0,
  splitPairs: 0,
  lostNewest: 0,
  lostPinned: 0,
  invented: 0,
  snapshotsWritten: 0,
  snapshotsInexact: 0,
  firstNotUser: 0,
  memoryMisplaced: 0,
  memoryDisplacedHistory: 0,
  memoryCompared: 0,
  utilisation: Array.from({ length: 1001 }, () => 0),
  utilisationCut: Array.from({ length: 1001 }, () => 0),
  callMs: Array.from({ length: 100_001 }, () => 0),
  examples: [],
});

async function runRange(
  first: number,
  count: number,
  maxMessages: number,
  progress?: (tally: Tally) => void,
): Promise<Tally> {
  // Exact o200k, every count remembered by text (generated conversations repeat their sentences and payloads).
  const tokenCounter = rememberingTokenCounter(await loadO200kTokenCounter());
  const tally = emptyTally();
  const note = (seed: number, problem: string) => {
    if (tally.examples.length < 20) tally.examples.push({ seed, problem });
  };
  for (let seed = first; seed < first + count; seed++) {
    // Stored counts as the store writes them when it appends (most rows with per-part counts).
    const conversation = withStoredCounts(generateConversation(seed, { maxMessages }), tokenCounter);
    const run = await runGeneratedConversation(conversation, tokenCounter, policy, { compareWithoutMemory: true });
    tally.conversations += 1;
    if (run.refused) tally.refused += 1;
    for (const call of run.calls) {
      tally.calls += 1;
      tally.callMs[Math.min(100_000, Math.round(call.ms * 10))]! += 1;
      if (call.overBudgetTokens > 0) {
        tally.overBudget += 1;
        tally.maxOverBudgetTokens = Math.max(tally.maxOverBudgetTokens, call.overBudgetTokens);
        note(seed, `over budget by ${call.overBudgetTokens}`);
      }
      if (call.splitPairs.length > 0) {
        tally.splitPairs += 1;
        note(seed, call.splitPairs[0]!);
      }
      if (call.lostNewest) {
        tally.lostNewest += 1;
        note(seed, 'lost newest input');
      }
      if (call.lostPinned.length > 0) {
        tally.lostPinned += 1;
        note(seed, `lost pinned ${call.lostPinned}`);
      }
      if (call.invented.length > 0) {
        tally.invented += 1;
        note(seed, `invented ${call.invented}`);
      }
      if (call.snapshotExact !== null) tally.snapshotsWritten += 1;
      if (call.snapshotExact === false) {
        tally.snapshotsInexact += 1;
        note(seed, 'snapshot rebuild differs');
      }
      if (call.firstRole !== null) {
        tally.firstNotUser += 1;
        note(seed, `starts on ${call.firstRole}`);
      }
      if (call.memoryProblems.length > 0) {
        tally.memoryMisplaced += 1;
        note(seed, call.memoryProblems[0]!);
      }
      if (call.memoryDisplacedHistory !== null) tally.memoryCompared += 1;
      if (call.memoryDisplacedHistory === true) {
        tally.memoryDisplacedHistory += 1;
        note(seed, 'memory took room from the history');
      }
      const permille = Math.min(1000, Math.floor((call.sentTokens / call.budget) * 1000));
      if (call.unmanagedTokens > call.budget) tally.utilisation[permille]! += 1;
      if (call.cut) tally.utilisationCut[permille]! += 1;
    }
    if (tally.conversations % 500 === 0) progress?.(tally);
  }
  return tally;
}

function merge(tallies: Tally[]): Tally {
  const total = emptyTally();
  for (const tally of tallies) {
    for (const key of Object.keys(total) as Array<keyof Tally>) {
      if (key === 'utilisation' || key === 'utilisationCut' || key === 'callMs')
        tally[key].forEach((value, index) => ((total[key] as number[])[index]! += value));
      else if (key === 'examples') total.examples.push(...tally.examples);
      else if (key === 'maxOverBudgetTokens') total[key] = Math.max(total[key], tally[key]);
      else (total[key] as number) += tally[key] as number;
    }
  }
  return total;
}

/** A percentile of a histogram, in bucket units. */
function histogramPercentile(buckets: number[], p: number): number {
  const count = buckets.reduce((sum, value) => sum + value, 0);
  const rank = Math.max(1, Math.ceil((p / 100) * count));
  let seen = 0;
  for (const [index, value] of buckets.entries()) if ((seen += value) >= rank) return index;
  return buckets.length - 1;
}

function summarize(tally: Tally, seconds: number, settings: Record<string, unknown>) {
  const utilisationOf = (buckets: number[]) => ({
    calls: buckets.reduce((sum, value) => sum + value, 0),
    medianPercent: round(histogramPercentile(buckets, 50) / 10, 1),
    worstTenthPercent: round(histogramPercentile(buckets, 10) / 10, 1),
    minPercent: round(buckets.findIndex((value) => value > 0) / 10, 1),
  });
  const ms = (p: number) => round(histogramPercentile(tally.callMs, p) / 10, 1);
  const summary = {
    settings,
    seconds: round(seconds, 0),
    conversations: tally.conversations,
    calls: tally.calls,
    refusedWithTypedError: tally.refused,
    overBudgetCalls: tally.overBudget,
    maxOverBudgetTokens: tally.maxOverBudgetTokens,
    splitCallsOrApprovals: tally.splitPairs,
    lostNewestInput: tally.lostNewest,
    lostPinned: tally.lostPinned,
    inventedResults: tally.invented,
    snapshotsWritten: tally.snapshotsWritten,
    snapshotsNotRebuiltExactly: tally.snapshotsInexact,
    startsOnNonUser: tally.firstNotUser,
    memoryMisplaced: tally.memoryMisplaced,
    memoryDisplacedHistory: tally.memoryDisplacedHistory,
    callsComparedWithoutMemory: tally.memoryCompared,
    utilisationOfOverBudgetCalls: utilisationOf(tally.utilisation),
    utilisationOfCutCalls: utilisationOf(tally.utilisationCut),
    perCallMs: { median: ms(50), p99: ms(99), max: ms(100) },
    examples: tally.examples,
  };
  return summary;
}

async function main() {
  const conversations = Number(process.env.CONTEXT_FIT_CONVERSATIONS ?? 100_000);
  const firstSeed = Number(process.env.CONTEXT_FIT_SEED ?? 1);
  const workers = Number(process.env.CONTEXT_FIT_WORKERS ?? 2);
  const maxMessages = Number(process.env.CONTEXT_FIT_MAX_MESSAGES ?? 2000);
  const started = performance.now();
  let tally: Tally;
  // CONTEXT_FIT_PROGRESS_FILE: the summary so far is written there every 500 conversations (of each worker).
  const progressFile = process.env.CONTEXT_FIT_PROGRESS_FILE;
  const progress = progressFile
    ? (so: Tally) =>
        writeFileSync(
          progressFile,
          JSON.stringify(
            summarize(so, (performance.now() - started) / 1000, { conversations, firstSeed, workers, maxMessages }),
            null,
            2,
          ),
        )
    : undefined;
  if (workers <= 1) tally = await runRange(firstSeed, conversations, maxMessages, progress);
  else {
    const share = Math.ceil(conversations / workers);
    const latest: Array<Tally | undefined> = [];
    tally = merge(
      await Promise.all(
        Array.from({ length: workers }, (_worker, index) => {
          const first = firstSeed + index * share;
          const count = Math.max(0, Math.min(share, firstSeed + conversations - first));
          return new Promise<Tally>((resolve, reject) => {
            const child = fork(fileURLToPath(import.meta.url), [], {
              env: { ...process.env, CONTEXT_FIT_CHILD: `${first}:${count}:${maxMessages}` },
              execArgv: process.execArgv,
            });
            child.on('message', (message) => {
              const { done, tally: so } = message as { done: boolean; tally: Tally };
              latest[index] = so;
              if (done) resolve(so);
              else progress?.(merge(latest.filter((value): value is Tally => value !== undefined)));
            });
            child.on('error', reject);
            child.on('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)));
          });
        }),
      ),
    );
  }
  const summary = summarize(tally, (performance.now() - started) / 1000, {
    conversations,
    firstSeed,
    workers,
    maxMessages,
  });
  console.log(JSON.stringify(summary, null, 2));
  const failed =
    summary.overBudgetCalls +
    summary.splitCallsOrApprovals +
    summary.lostNewestInput +
    summary.lostPinned +
    summary.inventedResults +
    summary.snapshotsNotRebuiltExactly +
    summary.startsOnNonUser +
    summary.memoryMisplaced +
    summary.memoryDisplacedHistory;
  process.exitCode = failed > 0 ? 1 : 0;
}

const child = process.env.CONTEXT_FIT_CHILD;
if (child) {
  const [first, count, maxMessages] = child.split(':').map(Number) as [number, number, number];
  const tally = await runRange(first, count, maxMessages, (so) => process.send!({ done: false, tally: so }));
  process.send!({ done: true, tally }, () => process.exit(0));
} else await main();
