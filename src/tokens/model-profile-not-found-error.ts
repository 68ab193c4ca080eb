import { AgentHistoryError, describeValue } from '../errors/agent-history-error.js';

/**
 * The model is not in the profile table and no explicit limits were given: the engine refuses to guess a window.
 * To `createContextManager` pass `modelProfile: { contextWindow, maxOutputTokens }` or `maxInputTokens`; to
 * `resolveModelProfile`, `overrides: { contextWindow, maxOutputTokens }` or table `entries`.
 */
export class ModelProfileNotFoundError extends AgentHistoryError {
  /** The model id as it was given. */
  readonly modelId: string;
  /** The provider of the AI SDK model, when a model object was given. */
  readonly provider: string | undefined;
  constructor({ modelId, provider }: { modelId: string; provider?: string }) {
    const from = provider === undefined ? '' : ` (provider ${describeValue(provider)})`;
    super({
      code: 'model-profile-not-found',
      message:
        `No model profile for ${describeValue(modelId)}${from}: its context window is unknown. Pass ` +
        'modelProfile: { contextWindow, maxOutputTokens } or maxInputTokens to createContextManager ' +
        '(overrides: { contextWindow, maxOutputTokens } to resolveModelProfile).',
    });
    this.modelId = modelId;
    this.provider = provider;
  }
}
