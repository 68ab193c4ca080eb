import { assertMaxInputTokens } from '../../context/contracts/context-budget.js';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { ModelProfileNotFoundError } from '../../tokens/model-profile-not-found-error.js';
import { resolveModelProfile, type ModelProfile } from '../../tokens/model-profile.js';

/** A model as the context manager identifies it: an id, an AI SDK model (`provider` + `modelId`), or a resolved profile. */
export type ContextManagerModel = string | { readonly provider: string; readonly modelId: string } | ModelProfile;

/**
 * The profile `createContextManager` budgets with. A profile is taken as it is (with `overrides` on top); an AI
 * SDK model is resolved by its `modelId` and its `provider` (which sets the tokenizer family when the id does
 * not). A model the table lacks needs its limits (`overrides.contextWindow` and `overrides.maxOutputTokens`) or a
 * `maxInputTokens`: then a missing window is taken as exactly `maxInputTokens` + the output reserve with no margin
 * (so the budget is `maxInputTokens`), a missing output limit as the reserve (`maxOutputTokens`, else 1), and the
 * family comes from the id or the provider (`other`, the most conservative, when neither says). Otherwise
 * {@link ModelProfileNotFoundError} names the model and what to pass.
 */
export function resolveManagerProfile({
  model,
  overrides = {},
  maxInputTokens,
  maxOutputTokens,
}: {
  model: ContextManagerModel;
  overrides?: Partial<Omit<ModelProfile, 'modelId'>>;
  maxInputTokens?: number;
  maxOutputTokens?: number;
}): ModelProfile {
  if (maxInputTokens !== undefined) assertMaxInputTokens(maxInputTokens);
  assertModel(model);
  if (typeof model === 'object' && 'contextWindow' in model) return { ...model, ...overrides };
  const { modelId, provider } = typeof model === 'string' ? { modelId: model, provider: undefined } : model;
  try {
    return resolveModelProfile({ modelId, provider, overrides });
  } catch (error) {
    if (!(error instanceof ModelProfileNotFoundError) || maxInputTokens === undefined) throw error;
    const reserve = maxOutputTokens ?? overrides.maxOutputTokens ?? 1;
    // Without a window, the one taken leaves exactly `maxInputTokens` after the reserve: no margin on a guess.
    const window =
      overrides.contextWindow === undefined
        ? { contextWindow: maxInputTokens + reserve, safetyMarginRatio: overrides.safetyMarginRatio ?? 0 }
        : {};
    return resolveModelProfile({
      modelId,
      provider,
      overrides: { ...overrides, ...window, maxOutputTokens: overrides.maxOutputTokens ?? reserve },
    });
  }
}

/** A model that is neither an id nor an object with a `modelId` (`undefined`, `null`, a number) is named, typed. */
function assertModel(model: unknown): asserts model is ContextManagerModel {
  const named = typeof model === 'object' && model !== null && ('contextWindow' in model || 'modelId' in model);
  if (typeof model !== 'string' && !named)
    throw new InvalidArgumentError({
      argument: 'model',
      value: model,
      message: "expected a model id such as 'gpt-4o', an AI SDK model ({ provider, modelId }) or a model profile.",
    });
}
