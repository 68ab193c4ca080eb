import { describe, expect, it } from 'vitest';
import { computeContextBudget, resolveModelProfile } from '../../../src/context/index.js';

describe('computeContextBudget', () => {
  it('should return the breakdown: window − output − instructions − tools − input − margin', () => {
    const profile = resolveModelProfile({ modelId: 'gpt-4o' });
    expect(
      computeContextBudget({
        profile,
        maxOutputTokens: 4096,
        instructionsTokens: 300,
        toolDefinitionsTokens: 700,
        currentInputTokens: 50,
        historyTokens: 90_000,
      }),
    ).toEqual({
      contextWindow: 128_000,
      maxOutputTokens: 4096,
      instructionsTokens: 300,
      toolDefinitionsTokens: 700,
      currentInputTokens: 50,
      safetyMarginTokens: 3840,
      maxInputTokens: null,
      availableTokens: 128_000 - 4096 - 300 - 700 - 50 - 3840,
      historyTokens: 90_000,
      remainingTokens: 128_000 - 4096 - 300 - 700 - 50 - 3840 - 90_000,
      tokenizerFactor: 1,
      calibration: 1,
    });
  });

  it('should take maxInputTokens as the ceiling when it is below what the window leaves, with no margin on it', () => {
    const profile = resolveModelProfile({ modelId: 'gpt-4o' });
    const base = {
      profile,
      maxOutputTokens: 4096,
      instructionsTokens: 300,
      toolDefinitionsTokens: 700,
      currentInputTokens: 50,
    };
    expect(computeContextBudget({ ...base, maxInputTokens: 8000 })).toMatchObject({
      maxInputTokens: 8000,
      availableTokens: 8000 - 300 - 700 - 50,
    });
    // Above what the window leaves, the window decides.
    expect(computeContextBudget({ ...base, maxInputTokens: 1_000_000 }).availableTokens).toBe(
      128_000 - 4096 - 3840 - 300 - 700 - 50,
    );
    expect(() => computeContextBudget({ ...base, maxInputTokens: 0 })).toThrowError(
      'Invalid maxInputTokens 0: expected a positive integer: the most tokens a model call may be sent.',
    );
  });

  it('should reserve the model maximum output when none is requested, and reject an impossible one', () => {
    const profile = resolveModelProfile({ modelId: 'gpt-5' });
    expect(
      computeContextBudget({ profile, instructionsTokens: 0, toolDefinitionsTokens: 0, currentInputTokens: 0 })
        .maxOutputTokens,
    ).toBe(128_000);
    expect(() =>
      computeContextBudget({
        profile,
        maxOutputTokens: 400_000,
        instructionsTokens: 0,
        toolDefinitionsTokens: 0,
        currentInputTokens: 0,
      }),
    ).toThrowError('Invalid maxOutputTokens 400000: expected an integer from 1 to below the context window (400000).');
  });
});
