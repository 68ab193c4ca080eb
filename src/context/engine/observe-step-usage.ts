import type { ContextCalibrator } from '../../tokens/context-calibrator.js';
import type { CompactContextOptions } from './compact-context-options.js';

// The provider's usage of the last step teaches the calibrator how far off the last estimate was.
/** Teaches the calibrator from the provider's usage of the last step; returns what the report shows of it. */
export function observeStepUsage({
  calibrator,
  lastEstimate,
  lastStepInputTokens,
}: {
  calibrator: ContextCalibrator;
  lastEstimate: number | undefined;
  lastStepInputTokens: number | undefined;
}): CompactContextOptions['observation'] {
  if (lastStepInputTokens !== undefined && lastEstimate !== undefined)
    calibrator.observe({ estimatedTokens: lastEstimate, actualTokens: lastStepInputTokens });
  return {
    observedInputTokens: lastStepInputTokens ?? null,
    estimatedInputTokens: lastStepInputTokens !== undefined ? (lastEstimate ?? null) : null,
  };
}
