import type { ModelMessage, PrepareStepFunction } from 'ai';
import type { ChatContextManager } from 'agent-history/ai-sdk';
import type { tools } from './tools';

/** One slice of a step's context budget, in tokens. */
export interface ContextBudgetSegment {
  kind: 'instructions' | 'tools' | 'summary' | 'history' | 'input' | 'steps' | 'free';
  tokens: number;
}

/** What the model saw at one step of a run, as a budget breakdown (the context manager's per-step report). */
export interface ContextStepReport {
  runId: string;
  stepNumber: number;
  contextWindow: number;
  segments: ContextBudgetSegment[];
  /** What the stages did (pruned, summarized, trimmed…). */
  notes: string[];
  at: string;
}

/**
 * Where the context inspector gets its data. The example ships an estimating stub; when the library's context
 * manager (`createContextManager`) is available, an implementation reads its per-step reports instead.
 */
export interface ContextReportSource {
  /** The context manager of one turn; it reports each step to this source. */
  contextManagerFor(input: { threadId: string; runId: string }): ChatContextManager<typeof tools>;
  /** The thread's reports, oldest first. */
  reports(threadId: string): Promise<ContextStepReport[]>;
}

const CONTEXT_WINDOW = 8_000;
const estimate = (value: unknown) => (value === undefined || (Array.isArray(value) && value.length === 0) ? 0 : Math.ceil(JSON.stringify(value).length / 4));

/**
 * A stub source: it estimates each step's breakdown (characters / 4) from what `prepareStep` receives, and keeps
 * the reports in memory. It changes nothing the model sees.
 */
export function createEstimatingReportSource({ instructions, toolSet }: { instructions: string; toolSet: typeof tools }): ContextReportSource {
  const store = globalThis as { __contextReports?: Map<string, ContextStepReport[]> };
  const byThread = (store.__contextReports ??= new Map());
  const toolTokens = estimate(Object.entries(toolSet).map(([name, definition]) => ({ name, description: definition.description })));
  return {
    contextManagerFor({ threadId, runId }) {
      const prepareStep: PrepareStepFunction<typeof tools> = ({ stepNumber, initialMessages, responseMessages }) => {
        const input = initialMessages.at(-1) as ModelMessage | undefined;
        const segments: ContextBudgetSegment[] = [
          { kind: 'instructions', tokens: estimate(instructions) },
          { kind: 'tools', tokens: toolTokens },
          { kind: 'history', tokens: estimate(initialMessages.slice(0, -1)) },
          { kind: 'input', tokens: estimate(input) },
          { kind: 'steps', tokens: estimate(responseMessages) },
        ];
        const used = segments.reduce((sum, segment) => sum + segment.tokens, 0);
        segments.push({ kind: 'free', tokens: Math.max(0, CONTEXT_WINDOW - used) });
        const reports = byThread.get(threadId) ?? [];
        reports.push({ runId, stepNumber, contextWindow: CONTEXT_WINDOW, segments, notes: ['estimated (stub source)'], at: new Date().toISOString() });
        byThread.set(threadId, reports.slice(-60));
        return undefined;
      };
      return { prepareStep };
    },
    async reports(threadId) {
      return byThread.get(threadId) ?? [];
    },
  };
}
