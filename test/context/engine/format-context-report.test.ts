import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeContextBudget,
  createContextEngine,
  formatContextBudgetBar,
  formatContextReport,
  type ContextBudget,
} from '../../../src/context/index.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import {
  assistant,
  reasoning,
  smallProfile,
  stepStart,
  storeOf,
  text,
  tokenCounter,
  user,
  words,
} from '../fixtures.js';

const turns = (count: number): ContextUIMessage[] =>
  Array.from({ length: count }, (_unused, turn) => [
    user(`u${turn}`, `Day ${turn}: what should we visit? ${words(60, `place${turn}`)}`),
    assistant(`a${turn}`, stepStart, reasoning(`thinking about day ${turn}`), text(`Visit museum ${turn}.`)),
  ]).flat();

const budget = (overrides: Partial<ContextBudget> = {}): ContextBudget => ({
  ...computeContextBudget({
    profile: smallProfile(1000, 200),
    instructionsTokens: 50,
    toolDefinitionsTokens: 100,
    currentInputTokens: 10,
  }),
  ...overrides,
});

describe('formatContextReport', () => {
  it('should give one line per request or step: messages, tokens of the window, each stage that removed, the time', async () => {
    const engine = createContextEngine({
      store: storeOf([...turns(10), user('q', 'And day 11?')]),
      profile: smallProfile(1200, 200),
      tokenCounter,
      instructions: 'You plan trips.',
      _internal: { now: () => 0 },
    });
    const { report } = await engine.buildInitialContext();
    const line = formatContextReport(report);
    expect(line).not.toContain('\n');
    expect(line).toMatch(/^initial: \d+ messages, [\d,]+ of 1,200 tokens; /);
    const removed = report.stages.filter((stage) => stage.removed.length > 0);
    expect(removed.length).toBeGreaterThan(0);
    for (const stage of removed)
      expect(line).toContain(
        `${stage.stage}`.concat(stage.stage === 'summarize' ? ' ' : ` −${stage.removed.length} (`),
      );
    expect(line).toMatch(/; 0 ms$/);
  });
});

describe('formatContextBudgetBar', () => {
  it('should draw the shares in budget order, free space as dots, always width + 2 characters', () => {
    expect(
      formatContextBudgetBar(
        budget({
          contextWindow: 1000,
          instructionsTokens: 100,
          toolDefinitionsTokens: 100,
          historyTokens: 300,
          currentInputTokens: 50,
          maxOutputTokens: 200,
          safetyMarginTokens: 50,
        }),
        { width: 20 },
      ),
    ).toBe('[IITTHHHHHHURRRRM....]');
    // An over-budget share fills the bar (found by the property below: it built a string of 190 million characters).
    expect(
      formatContextBudgetBar(budget({ contextWindow: 1, instructionsTokens: 0, toolDefinitionsTokens: 1_580_439 }), {
        width: 10,
      }),
    ).toBe('[TTTTTTTTTT]');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2_000_000 }),
        fc.array(fc.integer({ min: 0, max: 2_000_000 }), { minLength: 6, maxLength: 6 }),
        fc.integer({ min: 1, max: 120 }),
        (contextWindow, [a, b, c, d, e, f], width) => {
          const bar = formatContextBudgetBar(
            budget({
              contextWindow,
              instructionsTokens: a!,
              toolDefinitionsTokens: b!,
              historyTokens: c!,
              currentInputTokens: d!,
              maxOutputTokens: e!,
              safetyMarginTokens: f!,
            }),
            { width },
          );
          expect(bar).toHaveLength(width + 2);
          expect(bar).toMatch(/^\[I*T*H*U*R*M*\.*\]$/);
        },
      ),
    );
  });
});
