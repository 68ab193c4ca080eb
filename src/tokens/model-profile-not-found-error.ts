import { AgentHistoryError, describeValue } from '../errors/agent-history-error.js';

/**
 * The model is not in the profile table and no explicit limits were given. Pass
 * `overrides: { contextWindow, maxOutputTokens }` (or table `entries`) to `resolveModelProfile`.
 */
export class ModelProfileNotFoundError extends AgentHistoryError {
  /** The model id as it was given. */
  readonly modelId: string;
  constructor({ modelId }: { modelId: string }) {
    super({
      code: 'model-profile-not-found',
      message: `No model profile for ${describeValue(modelId)}: pass overrides with contextWindow and maxOutputTokens.`,
    });
    this.modelId = modelId;
  }
}
