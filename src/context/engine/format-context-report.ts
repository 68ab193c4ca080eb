import type { ContextBudget } from '../contracts/context-budget.js';
import type { ContextReport } from '../contracts/context-report.js';

/** Options of {@link formatContextBudgetBar}. */
export interface FormatContextBudgetBarOptions {
  /**
   * Characters between the brackets.
   * @default 40
   */
  width?: number;
}

// One letter per share of the window, in the order the budget is spent.
const SHARES = [
  ['I', 'instructions'],
  ['T', 'tools'],
  ['H', 'history'],
  ['U', 'input'],
  ['R', 'reserve'],
  ['M', 'margin'],
] as const;

const count = (value: number) => value.toLocaleString('en-US');

function shares(budget: ContextBudget): Record<(typeof SHARES)[number][1], number> {
  return {
    instructions: budget.instructionsTokens,
    tools: budget.toolDefinitionsTokens,
    history: budget.historyTokens,
    input: budget.currentInputTokens,
    reserve: budget.maxOutputTokens,
    margin: budget.safetyMarginTokens,
  };
}

/**
 * The budget as a text bar over the context window: `I` instructions, `T` tool definitions, `H` history, `U` the
 * current input, `R` the output reserve, `M` the safety margin, `.` free. Each share gets its rounded part of the
 * width (at least one character when it is not zero), so the bar is always `width + 2` characters long.
 *
 * @example
 * formatContextBudgetBar(report.budget); // '[IT HHHHHHHHUR M.........................]'
 */
export function formatContextBudgetBar(
  budget: ContextBudget,
  { width = 40 }: FormatContextBudgetBarOptions = {},
): string {
  const window = Math.max(1, budget.contextWindow);
  const values = shares(budget);
  let bar = '';
  for (const [letter, name] of SHARES) {
    const value = values[name];
    if (value <= 0) continue;
    // A share larger than the window (an over-budget prompt) fills the bar; it never grows a huge string.
    bar += letter.repeat(Math.min(width, Math.max(1, Math.round((value / window) * width))));
  }
  bar = bar.slice(0, width);
  return `[${bar.padEnd(width, '.')}]`;
}

/**
 * One line for one request or step of the context engine (what `onReport` receives): which step, the messages,
 * the prompt's tokens against the window, what each stage removed and saved, the summary and the snapshot.
 *
 * @example
 * onReport: (report) => console.log(formatContextReport(report), formatContextBudgetBar(report.budget)),
 * // step 2: 14 messages, 3,210 of 128,000 tokens; prune −3 (−420 tokens); summarize created [1..12] −4 (−1,800 tokens); snapshot v3 written; 12 ms
 */
export function formatContextReport(report: ContextReport): string {
  const what = report.trigger === 'initial-messages' ? 'initial' : `step ${report.stepNumber ?? '?'}`;
  const parts = [
    `${report.messageCount} messages, ${count(report.estimatedTokens)} of ${count(report.budget.contextWindow)} tokens` +
      (report.budget.maxInputTokens === null ? '' : ` (input budget ${count(report.budget.maxInputTokens)})`),
  ];
  for (const stage of report.stages) {
    const summary =
      stage.stage === 'summarize' && stage.status !== 'not-needed'
        ? ` ${stage.status}${stage.fromSequence !== null ? ` [${stage.fromSequence}..${stage.throughSequence}]` : ''}`
        : '';
    if (stage.removed.length === 0 && summary === '') continue;
    const removed = stage.removed.length > 0 ? ` −${stage.removed.length} (−${count(stage.tokensSaved)} tokens)` : '';
    parts.push(`${stage.stage}${summary}${removed}`);
  }
  if (report.snapshot.status === 'written' || report.snapshot.status === 'conflict')
    parts.push(`snapshot v${report.snapshot.version ?? '?'} ${report.snapshot.status}`);
  parts.push(`${Math.round(report.durationMs)} ms`);
  return `${what}: ${parts.join('; ')}`;
}
