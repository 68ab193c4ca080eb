import { instruments } from '../../telemetry/meter.js';
import type { ContextReport } from '../contracts/context-report.js';

/**
 * Records a compaction's figures in the package's metrics: the tokens each stage saved (by stage and trigger) and
 * the budget's utilization (the history's tokens over those available to it), for every compaction, changed or not.
 */
export function recordContextMetrics(report: ContextReport): void {
  const meters = instruments();
  const trigger = { 'agent_history.context.trigger': report.trigger };
  for (const stage of report.stages)
    if (stage.tokensSaved > 0)
      meters.tokensSaved.add(stage.tokensSaved, { ...trigger, 'agent_history.context.stage': stage.stage });
  const { historyTokens, availableTokens } = report.budget;
  if (availableTokens > 0) meters.budgetUtilization.record(historyTokens / availableTokens, trigger);
}
