// What a new user may pass by mistake to createContextManager (a JavaScript caller, a value read from a config
// file): every bad `model` or `policy.summary.targetRatio` is an InvalidArgumentError naming the option and the
// value, never a TypeError from inside the engine nor a silently coerced string.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createContextManager } from '../../../src/ai-sdk/context-manager/create-context-manager.js';
import { InvalidArgumentError } from '../../../src/errors/index.js';
import { storeOf, tokenCounter, user } from '../../context/fixtures.js';

const store = () => storeOf([user('u1', 'Hi')]);

function refusal(run: () => unknown): InvalidArgumentError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError, nothing was thrown');
}

const namesAModel = (value: unknown) =>
  typeof value === 'string' ||
  (typeof value === 'object' && value !== null && ('modelId' in value || 'contextWindow' in value));

describe('createContextManager options', () => {
  it('should refuse a model that is no id, no AI SDK model and no profile, naming it', () => {
    for (const model of [undefined, null, 42, {}, [], true, { provider: 'openai.chat' }]) {
      const error = refusal(() => createContextManager({ store: store(), model: model as never, tokenCounter }));
      expect(error.argument).toBe('model');
      expect(error.value).toBe(model);
    }
    fc.assert(
      fc.property(
        fc.anything().filter((value) => !namesAModel(value)),
        (model) => {
          expect(
            refusal(() => createContextManager({ store: store(), model: model as never, tokenCounter })).argument,
          ).toBe('model');
        },
      ),
    );
  });

  it('should refuse a targetRatio that is not a number in (0, 1], a numeric string included', async () => {
    for (const targetRatio of ['0.5', '1', true, null, 0, 1.5, Number.NaN, -0.1]) {
      const error = refusal(() =>
        createContextManager({
          store: store(),
          model: 'gpt-4o',
          tokenCounter,
          policy: { summary: { targetRatio: targetRatio as never } },
        }),
      );
      expect(error.argument).toBe('policy.summary.targetRatio');
      expect(error.value).toBe(targetRatio);
    }
    fc.assert(
      fc.property(
        fc.anything().filter((value) => typeof value !== 'number' && value !== undefined),
        (targetRatio) => {
          const error = refusal(() =>
            createContextManager({
              store: store(),
              model: 'gpt-4o',
              tokenCounter,
              policy: { summary: { targetRatio: targetRatio as never } },
            }),
          );
          expect(error.argument).toBe('policy.summary.targetRatio');
        },
      ),
    );
    const context = createContextManager({
      store: store(),
      model: 'gpt-4o',
      tokenCounter,
      policy: { summary: { targetRatio: 1 } },
    });
    await expect(context.initialMessages()).resolves.toHaveLength(1);
  });

  it('should refuse assistantStatuses that is not an array, naming it', () => {
    const error = refusal(() =>
      createContextManager({
        store: store(),
        model: 'gpt-4o',
        tokenCounter,
        policy: { assistantStatuses: 'completed' as never },
      }),
    );
    expect(error.argument).toBe('policy.assistantStatuses');
    expect(error.value).toBe('completed');
  });
});
