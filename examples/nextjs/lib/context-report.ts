import type { Instructions, LanguageModel } from 'ai';
import type { TenantHistory } from 'agent-history';
import {
  createContextManager,
  createGenerateTextSummarizer,
  createOfflineSummarizer,
  type ChatContextManager,
  type ContextReport,
} from 'agent-history/ai-sdk';
import type { tools } from './tools';

/** One slice of a step's context budget, in tokens. */
export interface ContextBudgetSegment {
  kind: 'instructions' | 'tools' | 'history' | 'input' | 'reserve' | 'margin' | 'free';
  tokens: number;
}

/** What the model was given at one step of a run, as a budget breakdown. */
export interface ContextStepReport {
  runId: string;
  stepNumber: number;
  contextWindow: number;
  segments: ContextBudgetSegment[];
  /** What the stages did (pruned, summarized, trimmed…), and the snapshot. */
  notes: string[];
  at: string;
}

/** Where the context inspector gets its data. */
export interface ContextReportSource {
  /** The context manager of one turn; it reports each step to this source. */
  contextManagerFor(input: {
    history: TenantHistory;
    threadId: string;
    runId: string;
  }): ChatContextManager<typeof tools>;
  /** The thread's reports, oldest first. */
  reports(threadId: string): Promise<ContextStepReport[]>;
}

export interface ContextManagerReportSourceOptions {
  instructions: Instructions;
  toolSet: typeof tools;
  /** The model id whose profile sets the budget (`gpt-4o-mini`). */
  modelId: string;
  /** The model, to write summaries with; the offline summarizer otherwise. */
  summaryModel?: LanguageModel;
  /** Overrides the profile's window (a small one makes a short chat show pruning, a summary and a snapshot). */
  contextWindow?: number;
  maxOutputTokens?: number;
}

/**
 * The library's context manager, per turn, keeping each step's report (budget breakdown and stage results) in
 * memory for the inspector. Reports live as long as the server process.
 */
export function createContextManagerReportSource({
  instructions,
  toolSet,
  modelId,
  summaryModel,
  contextWindow,
  maxOutputTokens = 500,
}: ContextManagerReportSourceOptions): ContextReportSource {
  const store = globalThis as { __contextReports?: Map<string, ContextStepReport[]> };
  const byThread = (store.__contextReports ??= new Map());
  const summarizer = summaryModel ? createGenerateTextSummarizer({ model: summaryModel }) : createOfflineSummarizer();
  return {
    contextManagerFor({ history, threadId, runId }) {
      return createContextManager({
        store: history.contextStore(threadId),
        model: modelId,
        modelProfile: contextWindow === undefined ? undefined : { contextWindow, maxOutputTokens },
        maxOutputTokens,
        tools: toolSet,
        instructions,
        summarizer,
        onReport: (report) => {
          // One report per step: step 0 comes from initialMessages(), and again from prepareStep only if that
          // changed the context (then it replaces the first).
          const entry = toStepReport(runId, report);
          const reports = (byThread.get(threadId) ?? []).filter(
            (other: ContextStepReport) => other.runId !== runId || other.stepNumber !== entry.stepNumber,
          );
          reports.push(entry);
          byThread.set(threadId, reports.slice(-80));
        },
      });
    },
    async reports(threadId) {
      return byThread.get(threadId) ?? [];
    },
  };
}

function toStepReport(runId: string, report: ContextReport): ContextStepReport {
  const { budget } = report;
  const notes = report.stages
    .filter((stage) => stage.removed.length > 0 || (stage.stage === 'summarize' && stage.status !== 'not-needed'))
    .map(
      (stage) =>
        `${stage.stage}${'status' in stage ? ` ${stage.status}` : ''}: ${stage.removed.length} removed, ${stage.tokensSaved} tokens saved`,
    );
  if (report.snapshot.status === 'written') notes.push(`snapshot v${report.snapshot.version} written`);
  return {
    runId,
    stepNumber: report.stepNumber ?? 0,
    contextWindow: budget.contextWindow,
    segments: [
      { kind: 'instructions', tokens: budget.instructionsTokens },
      { kind: 'tools', tokens: budget.toolDefinitionsTokens },
      { kind: 'history', tokens: budget.historyTokens },
      { kind: 'input', tokens: budget.currentInputTokens },
      { kind: 'reserve', tokens: budget.maxOutputTokens },
      { kind: 'margin', tokens: budget.safetyMarginTokens },
      { kind: 'free', tokens: Math.max(0, budget.remainingTokens) },
    ],
    notes,
    at: new Date().toISOString(),
  };
}
