import type { ModelMessage } from '@ai-sdk/provider-utils';
import { describe, expect, it } from 'vitest';
import { createContextEngine, type ContextReport } from '../../../src/context/index.js';
import type { ContextUIMessage } from '../../../src/model/context-ui-message.js';
import { copyMessages } from '../../support/copy-messages.js';
import {
  assistant,
  reasoning,
  smallProfile,
  storeOf,
  text,
  tokenCounter,
  toolResult,
  user,
  words,
} from '../fixtures.js';

// A step given the very messages the engine last returned is not compacted again (`stages: []`). Everything else
// it reports, and whether it reports at all, must be what the full compaction (given copies) reports and does.

const thread: ContextUIMessage[] = [
  user('u1', `Plan the first day. ${words(40, 'plan')}`),
  assistant('a1', reasoning('thinking'), toolResult('search', 'c1', { day: 1 }, { hits: ['museum'] }), text('Museum.')),
  user('u2', 'And the second day?'),
];
const step: ModelMessage[] = [
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 's1', toolName: 'search', input: { day: 2 } }] },
  {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 's1', toolName: 'search', output: { type: 'text', value: 'park' } }],
  },
];

function engineOf() {
  const reports: ContextReport[] = [];
  const engine = createContextEngine({
    store: storeOf(thread),
    profile: smallProfile(4000, 500),
    tokenCounter,
    onReport: (report) => reports.push(report),
    _internal: { now: () => 0 },
  });
  return { engine, reports };
}

// What a report says besides its stages (which the repeated step leaves empty, as documented).
const withoutStages = ({ stages: _stages, ...rest }: ContextReport) => rest;

describe('a step given the messages just returned', () => {
  it('should report no usage observed when the step has none, as the full compaction does', async () => {
    const run = async (copy: boolean) => {
      const { engine } = engineOf();
      const initial = await engine.buildInitialContext();
      const messages = [...initial.messages, ...step];
      // Step 1 learns from the provider's usage; the next call has none.
      const first = await engine.prepareStep({ messages, stepNumber: 1, lastStepInputTokens: 900 });
      const returned = first.messages ?? messages;
      return engine.prepareStep({ messages: copy ? copyMessages(returned) : returned, stepNumber: 2 });
    };
    const [same, full] = [await run(false), await run(true)];
    expect(same.report.stages).toEqual([]);
    expect(full.report.calibration).toEqual({
      factor: full.report.calibration.factor,
      observedInputTokens: null,
      estimatedInputTokens: null,
    });
    expect(same.messages).toEqual(full.messages);
    expect(withoutStages(same.report)).toEqual(withoutStages(full.report));
  });

  it('should emit at step 0 exactly when the full compaction emits, whatever the last compaction was', async () => {
    const run = async (copy: boolean) => {
      const { engine, reports } = engineOf();
      const initial = await engine.buildInitialContext();
      const given = (messages: ModelMessage[]) => (copy ? copyMessages(messages) : messages);
      // Step 0 with other instructions is compacted (unchanged, so not reported), and so is a step 1 of the same
      // messages; then step 0 again, as a retried first step would be.
      const instructions = `You are a travel agent. ${words(30, 'rule')}`;
      const zero = await engine.prepareStep({ messages: given(initial.messages), stepNumber: 0, instructions });
      const messages = zero.messages ?? initial.messages;
      await engine.prepareStep({ messages: given(messages), stepNumber: 0, instructions });
      await engine.prepareStep({ messages: given(messages), stepNumber: 1, instructions });
      await engine.prepareStep({ messages: given(messages), stepNumber: 0, instructions });
      return reports.map((report) => [report.trigger, report.stepNumber]);
    };
    expect(await run(false)).toEqual(await run(true));
  });
});

describe('a step given the messages just returned, with other instructions of the same calibrated size', () => {
  it('should leave the next step the estimate the full compaction leaves it', async () => {
    // Below 1 (a calibrator whose floor was lowered), two sizes round to one: 10 and 9 tokens are both 9.
    const factor = 0.9;
    const sized = (tokens: number) => {
      for (let words = 1; words < 40; words++) {
        const value = Array.from({ length: words }, () => 'hello').join(' ');
        if (tokenCounter.count(value) === tokens) return value;
      }
      throw new Error(`no instructions of ${tokens} tokens`);
    };
    const [longer, shorter] = [sized(10), sized(9)];
    const run = async (copy: boolean) => {
      const observed: number[] = [];
      const calibrator = {
        factor,
        observations: 0,
        observe: ({ estimatedTokens }: { estimatedTokens: number }) => {
          observed.push(estimatedTokens);
          return factor;
        },
      };
      const engine = createContextEngine({
        store: storeOf(thread),
        profile: smallProfile(4000, 500),
        tokenCounter,
        calibrator,
        instructions: longer,
        _internal: { now: () => 0 },
      });
      const initial = await engine.buildInitialContext();
      const given = copy ? copyMessages(initial.messages) : initial.messages;
      const zero = await engine.prepareStep({ messages: given, stepNumber: 0, instructions: shorter });
      const messages = [...(zero.messages ?? given), ...step];
      const one = await engine.prepareStep({
        messages,
        stepNumber: 1,
        instructions: shorter,
        lastStepInputTokens: 500,
      });
      return { stages: zero.report.stages.length, observed, calibration: one.report.calibration };
    };
    const [same, full] = [await run(false), await run(true)];
    expect(full.stages).toBeGreaterThan(0);
    expect(same.observed).toEqual(full.observed);
    expect(same.calibration).toEqual(full.calibration);
  });
});

describe('the report of a step given the messages just returned', () => {
  it('should be its own: changing it changes no other report', async () => {
    const { engine, reports } = engineOf();
    const initial = await engine.buildInitialContext();
    const messages = [...initial.messages, ...step];
    const first = await engine.prepareStep({ messages, stepNumber: 1 });
    const again = await engine.prepareStep({ messages: first.messages ?? messages, stepNumber: 2 });
    expect(again.report.stages).toEqual([]);
    const before = structuredClone(reports);
    again.report.budget.historyTokens += 1;
    expect(reports.slice(0, -1)).toEqual(before.slice(0, -1));
  });
});
