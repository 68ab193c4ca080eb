import type { Attributes } from '@opentelemetry/api';
import type { ContextReport } from '../contracts/context-report.js';

const PREFIX = 'agent_history.context';

/**
 * A {@link ContextReport} as the attributes of its compaction span: counts, token estimates, statuses and the
 * snapshot version, never a message, a summary, an id or a summarizer's error text.
 */
export function contextReportAttributes(report: ContextReport): Attributes {
  const { budget } = report;
  const saved = report.stages.reduce((total, stage) => total + stage.tokensSaved, 0);
  const attributes: Attributes = {
    [`${PREFIX}.trigger`]: report.trigger,
    [`${PREFIX}.changed`]: report.changed,
    [`${PREFIX}.messages`]: report.messageCount,
    [`${PREFIX}.tokens.before`]: report.estimatedTokens + saved,
    [`${PREFIX}.tokens.after`]: report.estimatedTokens,
    [`${PREFIX}.tokens.saved`]: saved,
    [`${PREFIX}.budget.context_window`]: budget.contextWindow,
    [`${PREFIX}.budget.max_output_tokens`]: budget.maxOutputTokens,
    [`${PREFIX}.budget.instructions_tokens`]: budget.instructionsTokens,
    [`${PREFIX}.budget.tool_definitions_tokens`]: budget.toolDefinitionsTokens,
    [`${PREFIX}.budget.current_input_tokens`]: budget.currentInputTokens,
    [`${PREFIX}.budget.safety_margin_tokens`]: budget.safetyMarginTokens,
    [`${PREFIX}.budget.available_tokens`]: budget.availableTokens,
    [`${PREFIX}.budget.history_tokens`]: budget.historyTokens,
    [`${PREFIX}.budget.remaining_tokens`]: budget.remainingTokens,
    [`${PREFIX}.calibration`]: report.calibration.factor,
    [`${PREFIX}.snapshot.status`]: report.snapshot.status,
    [`${PREFIX}.duration_ms`]: report.durationMs,
  };
  if (report.stepNumber !== null) attributes[`${PREFIX}.step`] = report.stepNumber;
  if (budget.maxInputTokens !== null) attributes[`${PREFIX}.budget.max_input_tokens`] = budget.maxInputTokens;
  // The share of what is left for the history that the history uses (above 1 only when nothing more could be cut).
  if (budget.availableTokens > 0)
    attributes[`${PREFIX}.budget.utilization`] =
      Math.round((budget.historyTokens / budget.availableTokens) * 1e4) / 1e4;
  if (report.snapshot.version !== null) attributes[`${PREFIX}.snapshot.version`] = report.snapshot.version;
  for (const stage of report.stages) {
    // A stage may run twice (trim, before and after selection): its entries add up.
    const key = `${PREFIX}.stage.${stage.stage}`;
    attributes[`${key}.removed`] = ((attributes[`${key}.removed`] as number | undefined) ?? 0) + stage.removed.length;
    attributes[`${key}.tokens_saved`] =
      ((attributes[`${key}.tokens_saved`] as number | undefined) ?? 0) + stage.tokensSaved;
    if (stage.stage === 'summarize') {
      attributes[`${PREFIX}.summary.status`] = stage.status;
      attributes[`${PREFIX}.summary.rounds`] = stage.rounds;
    }
    if (stage.stage === 'memory') attributes[`${PREFIX}.memory.status`] = stage.status;
    if (stage.stage === 'trim') attributes[`${PREFIX}.over_budget_tokens`] = stage.overBudgetTokens;
  }
  return attributes;
}
