import { InvalidArgumentError } from '../errors/invalid-argument-error.js';

/**
 * Learns how far the estimate is from the provider's count. After each step the provider reports
 * `usage.inputTokens`, the only ground truth for Claude and Gemini; the calibrator keeps a bounded moving
 * average of `actual / estimated` and the engine multiplies its estimates by it. Share one calibrator per
 * model across requests to keep what it learned.
 */
export interface ContextCalibrator {
  /** The current factor, between the floor and the ceiling. */
  readonly factor: number;
  /** How many observations it has taken. */
  readonly observations: number;
  /** Takes one observation and returns the new factor. Ignores non-positive or non-finite values. */
  observe(observation: { estimatedTokens: number; actualTokens: number }): number;
}

/** Options of {@link createContextCalibrator}. */
export interface CreateContextCalibratorOptions {
  /**
   * The weight of a new observation in the moving average.
   * @default 0.3
   */
  smoothing?: number;
  /**
   * The lowest factor. With 1 the estimate can only grow more conservative: an undercount is corrected within
   * a few steps, an overcount is left alone. Lower it (e.g. 0.9) once the estimates are trusted.
   * @default 1
   */
  floor?: number;
  /**
   * The highest factor, so that one odd report cannot starve the context.
   * @default 3
   */
  ceiling?: number;
  /**
   * The starting factor, e.g. one persisted from an earlier process.
   * @default 1
   */
  initialFactor?: number;
}

/**
 * A calibrator: an exponential moving average of `actual / estimated`, clamped to `[floor, ceiling]`.
 *
 * @example
 * const calibrator = createContextCalibrator();
 * calibrator.observe({ estimatedTokens: 1000, actualTokens: 1300 }); // 1.09
 */
export function createContextCalibrator({
  smoothing = 0.3,
  floor = 1,
  ceiling = 3,
  initialFactor = 1,
}: CreateContextCalibratorOptions = {}): ContextCalibrator {
  if (!(smoothing > 0 && smoothing <= 1))
    throw new InvalidArgumentError({
      argument: 'smoothing',
      value: smoothing,
      message: 'expected a weight above 0 and at most 1.',
    });
  if (!(floor > 0 && ceiling >= floor))
    throw new InvalidArgumentError({
      argument: 'ceiling',
      value: ceiling,
      message: `expected a ceiling of at least the floor (${floor}), and a floor above 0.`,
    });
  let factor = Math.min(ceiling, Math.max(floor, initialFactor));
  let observations = 0;
  return {
    get factor() {
      return factor;
    },
    get observations() {
      return observations;
    },
    observe({ estimatedTokens, actualTokens }) {
      if (!(
        Number.isFinite(estimatedTokens) &&
        estimatedTokens > 0 &&
        Number.isFinite(actualTokens) &&
        actualTokens > 0
      ))
        return factor;
      observations += 1;
      const ratio = actualTokens / estimatedTokens;
      factor = Math.min(ceiling, Math.max(floor, smoothing * ratio + (1 - smoothing) * factor));
      return factor;
    },
  };
}
