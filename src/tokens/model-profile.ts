import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { familyOf, normalizeModelId, providerPrefixOf, type ModelFamily } from './model-id.js';
import { ModelProfileNotFoundError } from './model-profile-not-found-error.js';

/**
 * What the context engine needs to know about a model to compute its budget. Counts are o200k tokens;
 * `tokenizerFactor` converts them for families without an offline tokenizer.
 */
export interface ModelProfile {
  /** The normalised model id the profile was resolved for, e.g. `gpt-4o` or `claude-sonnet-4-5`. */
  modelId: string;
  /** The tokenizer family. */
  family: ModelFamily;
  /** The model's context window in tokens (for Gemini an input limit, so subtracting the output is conservative). */
  contextWindow: number;
  /** The largest output the model can produce; the default output reserve when the request sets none. */
  maxOutputTokens: number;
  /** Multiplies o200k counts: 1 for OpenAI, about 1.25 for Claude, about 1.1 for Gemini. */
  tokenizerFactor: number;
  /** Framing tokens the provider adds per message. */
  perMessageTokens: number;
  /** Framing tokens the provider adds per tool definition. */
  perToolTokens: number;
  /** Tokens the provider adds once when any tool is defined (Claude's tool-use system prompt). */
  toolsPreambleTokens: number;
  /** Tokens charged per image (a conservative flat price; provider formulas depend on the image size). */
  imageTokens: number;
  /** Tokens charged per non-image file (PDF, audio, …), a conservative flat price. */
  fileTokens: number;
  /** The safety margin as a share of the context window: 3 % with an exact tokenizer, more with a factor. */
  safetyMarginRatio: number;
}

/** One row of {@link modelProfileTable}: a model id prefix and its limits. */
export interface ModelProfileEntry {
  /** Matches a normalised model id that equals it or continues with `-`, `.`, `:`, `@` or `/`. */
  prefix: string;
  /** The tokenizer family. */
  family: ModelFamily;
  /** See {@link ModelProfile.contextWindow}. */
  contextWindow: number;
  /** See {@link ModelProfile.maxOutputTokens}. */
  maxOutputTokens: number;
}

/** The per-family defaults applied to every entry of {@link modelProfileTable}. */
export const modelFamilyDefaults: Readonly<
  Record<ModelFamily, Omit<ModelProfile, 'modelId' | 'family' | 'contextWindow' | 'maxOutputTokens'>>
> = {
  openai: {
    tokenizerFactor: 1,
    perMessageTokens: 4,
    perToolTokens: 10,
    toolsPreambleTokens: 12,
    imageTokens: 1105,
    fileTokens: 3000,
    safetyMarginRatio: 0.03,
  },
  anthropic: {
    tokenizerFactor: 1.25,
    perMessageTokens: 7,
    perToolTokens: 20,
    toolsPreambleTokens: 550,
    imageTokens: 1600,
    fileTokens: 3000,
    safetyMarginRatio: 0.05,
  },
  google: {
    tokenizerFactor: 1.1,
    perMessageTokens: 4,
    perToolTokens: 10,
    toolsPreambleTokens: 20,
    imageTokens: 1032,
    fileTokens: 3000,
    safetyMarginRatio: 0.05,
  },
  other: {
    tokenizerFactor: 1.25,
    perMessageTokens: 8,
    perToolTokens: 20,
    toolsPreambleTokens: 550,
    imageTokens: 1600,
    fileTokens: 3000,
    safetyMarginRatio: 0.1,
  },
};

/**
 * The limits we keep (context window / max output), checked against the providers' documentation and
 * models.dev. Longer prefixes win. Override or extend it with {@link resolveModelProfile}'s options.
 */
export const modelProfileTable: readonly ModelProfileEntry[] = [
  { prefix: 'gpt-4o', family: 'openai', contextWindow: 128_000, maxOutputTokens: 16_384 },
  { prefix: 'chatgpt-4o', family: 'openai', contextWindow: 128_000, maxOutputTokens: 16_384 },
  { prefix: 'gpt-4.1', family: 'openai', contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  { prefix: 'gpt-5', family: 'openai', contextWindow: 400_000, maxOutputTokens: 128_000 },
  { prefix: 'gpt-5.5', family: 'openai', contextWindow: 1_050_000, maxOutputTokens: 128_000 },
  { prefix: 'o1', family: 'openai', contextWindow: 200_000, maxOutputTokens: 100_000 },
  { prefix: 'o3', family: 'openai', contextWindow: 200_000, maxOutputTokens: 100_000 },
  { prefix: 'o4-mini', family: 'openai', contextWindow: 200_000, maxOutputTokens: 100_000 },
  { prefix: 'claude-sonnet-4', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-3-7-sonnet', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-opus-4', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 32_000 },
  { prefix: 'claude-opus-4-5', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-haiku-4', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 64_000 },
  { prefix: 'claude-3-5-haiku', family: 'anthropic', contextWindow: 200_000, maxOutputTokens: 8_192 },
  { prefix: 'gemini-2.5-pro', family: 'google', contextWindow: 1_048_576, maxOutputTokens: 65_536 },
  { prefix: 'gemini-2.5-flash', family: 'google', contextWindow: 1_048_576, maxOutputTokens: 65_536 },
  { prefix: 'gemini-2.0-flash', family: 'google', contextWindow: 1_048_576, maxOutputTokens: 8_192 },
];

/** Options of {@link resolveModelProfile}. */
export interface ResolveModelProfileOptions {
  /**
   * The model id as the AI SDK names it: `gpt-4o`, `openai/gpt-4o` (gateway), `anthropic:claude-sonnet-4-5`,
   * `claude-sonnet-4.5`, `models/gemini-2.5-pro`, `us.anthropic.claude-sonnet-4-20250514-v1:0`, ….
   */
  modelId: string;
  /**
   * The provider that serves it, as an AI SDK model's `provider` (`openai.chat`, `azure.responses`,
   * `anthropic.messages`, `google.generative-ai`, `amazon-bedrock`, …): sets the tokenizer family of a model the
   * table lacks (an Azure deployment name, say) when its id does not. An id's own prefix (`anthropic:…`) counts too.
   */
  provider?: string;
  /** Fields that replace the resolved ones. With `contextWindow` and `maxOutputTokens` an unknown model resolves too. */
  overrides?: Partial<Omit<ModelProfile, 'modelId'>>;
  /** Extra table rows, matched before {@link modelProfileTable}. */
  entries?: readonly ModelProfileEntry[];
}

/**
 * The profile of a model: its limits from {@link modelProfileTable} (or `entries`), the family defaults
 * from {@link modelFamilyDefaults}, and `overrides` on top. An unknown model without explicit limits throws
 * {@link ModelProfileNotFoundError}: failing is safer than guessing a window.
 *
 * @example
 * resolveModelProfile({ modelId: 'anthropic:claude-sonnet-4-5' });
 * // { modelId: 'claude-sonnet-4-5', family: 'anthropic', contextWindow: 200000, maxOutputTokens: 64000, tokenizerFactor: 1.25, … }
 */
export function resolveModelProfile({
  modelId,
  provider,
  overrides = {},
  entries = [],
}: ResolveModelProfileOptions): ModelProfile {
  if (typeof modelId !== 'string' || modelId.trim() === '') {
    throw new InvalidArgumentError({
      argument: 'modelId',
      value: modelId,
      message: 'expected a model id such as "gpt-4o".',
    });
  }
  const normalized = normalizeModelId(modelId);
  const entry = matchEntry(normalized, entries) ?? matchEntry(normalized, modelProfileTable);
  let profile: ModelProfile;
  if (entry) {
    profile = {
      modelId: normalized,
      family: entry.family,
      contextWindow: entry.contextWindow,
      maxOutputTokens: entry.maxOutputTokens,
      ...modelFamilyDefaults[entry.family],
    };
  } else if (overrides.contextWindow !== undefined && overrides.maxOutputTokens !== undefined) {
    const family = overrides.family ?? familyOf(normalized, provider ?? providerPrefixOf(modelId)) ?? 'other';
    profile = {
      modelId: normalized,
      family,
      contextWindow: overrides.contextWindow,
      maxOutputTokens: overrides.maxOutputTokens,
      ...modelFamilyDefaults[family],
    };
  } else {
    throw new ModelProfileNotFoundError({ modelId, provider });
  }
  const resolved: ModelProfile = { ...profile, ...overrides, modelId: normalized };
  assertProfile(resolved);
  return resolved;
}

function matchEntry(id: string, entries: readonly ModelProfileEntry[]): ModelProfileEntry | undefined {
  let best: ModelProfileEntry | undefined;
  for (const entry of entries) {
    const prefix = entry.prefix.toLowerCase();
    if (!id.startsWith(prefix)) continue;
    const next = id.charAt(prefix.length);
    if (next !== '' && !'-.:@/'.includes(next)) continue;
    if (!best || prefix.length > best.prefix.length) best = entry;
  }
  return best;
}

function assertProfile(profile: ModelProfile): void {
  const positive = ['contextWindow', 'maxOutputTokens', 'tokenizerFactor'] as const;
  for (const key of positive) {
    if (!(Number.isFinite(profile[key]) && profile[key] > 0)) {
      throw new InvalidArgumentError({
        argument: `profile.${key}`,
        value: profile[key],
        message: 'expected a positive number.',
      });
    }
  }
  const nonNegative = [
    'perMessageTokens',
    'perToolTokens',
    'toolsPreambleTokens',
    'imageTokens',
    'fileTokens',
    'safetyMarginRatio',
  ] as const;
  for (const key of nonNegative) {
    if (!(Number.isFinite(profile[key]) && profile[key] >= 0)) {
      throw new InvalidArgumentError({
        argument: `profile.${key}`,
        value: profile[key],
        message: 'expected a number of 0 or more.',
      });
    }
  }
  if (profile.tokenizerFactor < 1) {
    throw new InvalidArgumentError({
      argument: 'profile.tokenizerFactor',
      value: profile.tokenizerFactor,
      message: 'a factor below 1 would undercount; expected 1 or more.',
    });
  }
  if (profile.safetyMarginRatio >= 0.5) {
    throw new InvalidArgumentError({
      argument: 'profile.safetyMarginRatio',
      value: profile.safetyMarginRatio,
      message: 'expected a share of the window below 0.5.',
    });
  }
}
