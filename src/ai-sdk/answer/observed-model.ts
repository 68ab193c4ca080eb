import type { TextStreamPart, ToolSet } from 'ai';
import type { StepModel, TurnPrepareStep } from '../shared/chat-model-source.js';

/** What a turn learns about its model as it runs, recorded on the run when it finishes. */
export interface ObservedModel {
  /** The provider of the model the steps ran on (`LanguageModel.provider`). */
  provider?: string;
  /** The model id: the model's own, or the one the provider's response named. */
  model?: string;
  /** The last step's finish reason. */
  finishReason?: string;
}

/**
 * Wraps the turn's `prepareStep` (or none) so that every step records the model it runs on: a model object's
 * `provider` and `modelId`, or a gateway id (`'openai/gpt-5'`) split at its first slash.
 */
export function observingPrepareStep(observed: ObservedModel, prepareStep?: TurnPrepareStep): TurnPrepareStep {
  return (options) => {
    const model = options.model as unknown;
    if (typeof model === 'string') {
      const slash = model.indexOf('/');
      if (slash > 0) observed.provider = model.slice(0, slash);
      observed.model = slash > 0 ? model.slice(slash + 1) : model;
    } else if (typeof model === 'object' && model !== null) {
      const { provider, modelId } = model as { provider?: unknown; modelId?: unknown };
      if (typeof provider === 'string') observed.provider = provider;
      if (typeof modelId === 'string') observed.model = modelId;
    }
    return prepareStep?.(options);
  };
}

/**
 * Records what the model stream says about the model: the response's model id on each finished step (when no
 * `prepareStep` saw the model, e.g. an agent built without it) and the finish reason at the end.
 */
export function observeStreamPart(observed: ObservedModel, part: TextStreamPart<ToolSet>): void {
  if (part.type === 'finish-step') {
    observed.model ??= part.response.modelId;
    observed.finishReason = part.finishReason;
  } else if (part.type === 'finish') {
    observed.finishReason = part.finishReason;
  }
}

/**
 * Records the provider and model id of the last step once the call's steps are known (`StreamTextResult.steps`), for
 * a run no `prepareStep` observed: a stream's parts name the model id but never its provider. What a step's
 * `prepareStep` saw wins; a call that fails or is aborted before its steps settle records nothing here.
 */
export function observeSteps(observed: ObservedModel, steps: PromiseLike<ReadonlyArray<StepModel>> | undefined): void {
  if (!steps) return;
  Promise.resolve(steps).then(
    (settled) => {
      const model = settled.at(-1)?.model;
      if (!model) return;
      observed.provider ??= model.provider;
      observed.model ??= model.modelId;
    },
    () => {},
  );
}
