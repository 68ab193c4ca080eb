import type { ModelMessage } from 'ai';
import { countModelMessageTokens, type TokenTally } from './count-message-tokens.js';
import type { ModelProfile } from './model-profile.js';
import type { TokenCounter } from './token-counter.js';

/** How the stages count and price: a token counter, a model profile and the current calibration. */
export interface ContextMeasure {
  /** The raw counter (o200k by default). */
  readonly tokenCounter: TokenCounter;
  /** The model's profile. */
  readonly profile: ModelProfile;
  /** The calibration factor from provider-reported usage, 1 or more. */
  readonly calibration: number;
  /** Raw tally of one message (memoised per message object). */
  countMessage(message: ModelMessage): TokenTally;
  /** Model-estimated tokens of a tally: see {@link estimateTokens}. */
  estimate(tally: TokenTally): number;
}

/**
 * Model-estimated tokens of a raw tally: `ceil((text × tokenizerFactor + images × imageTokens + files ×
 * fileTokens) × calibration) + messages × perMessageTokens`. With a factor and a calibration of at least 1
 * it is never below the exact count ({@link exactTokens}).
 */
export function estimateTokens(tally: TokenTally, profile: ModelProfile, calibration = 1): number {
  const content =
    tally.text * profile.tokenizerFactor + tally.images * profile.imageTokens + tally.files * profile.fileTokens;
  return Math.ceil(content * calibration) + tally.messages * profile.perMessageTokens;
}

/** The exact o200k count of a tally with the profile's fixed prices and overheads, no factor and no calibration. */
export function exactTokens(tally: TokenTally, profile: ModelProfile): number {
  return (
    tally.text +
    tally.images * profile.imageTokens +
    tally.files * profile.fileTokens +
    tally.messages * profile.perMessageTokens
  );
}

/** Options of {@link createContextMeasure}. */
export interface CreateContextMeasureOptions {
  /** The raw counter. */
  tokenCounter: TokenCounter;
  /** The model's profile. */
  profile: ModelProfile;
  /**
   * The calibration factor (see {@link createContextCalibrator}).
   * @default 1
   */
  calibration?: number;
}

/** Binds a counter, a profile and a calibration into the {@link ContextMeasure} the stages take. */
export function createContextMeasure({
  tokenCounter,
  profile,
  calibration = 1,
}: CreateContextMeasureOptions): ContextMeasure {
  const measure: ContextMeasure = {
    tokenCounter,
    profile,
    calibration,
    countMessage: (message) => countModelMessageTokens(message, tokenCounter),
    estimate: (tally) => estimateTokens(tally, profile, calibration),
  };
  profilePriced.add(measure);
  return measure;
}

const profilePriced = new WeakSet<ContextMeasure>();

/**
 * Whether the measure is one {@link createContextMeasure} made: its estimate is {@link estimateTokens} of its
 * profile's prices (`tokenizerFactor`, `imageTokens`, `fileTokens`, `perMessageTokens`) and its calibration, so two
 * such measures with the same prices estimate alike (another object may implement `estimate` otherwise).
 */
export function isProfilePriced(measure: ContextMeasure): boolean {
  return profilePriced.has(measure);
}
