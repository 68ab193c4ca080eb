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
  profilePriced.set(measure, { estimate: measure.estimate, profile, calibration });
  return measure;
}

// What a measure createContextMeasure made estimates with: its own estimate, over this profile and calibration (the
// object's properties may be replaced afterwards, the estimate's are not).
const profilePriced = new WeakMap<
  ContextMeasure,
  { estimate: ContextMeasure['estimate']; profile: ModelProfile; calibration: number }
>();

const pricesByKey = new Map<string, object>();
// Distinct prices remembered (a calibrator moves the factor over time): the oldest are forgotten past this.
const PRICES_KEPT = 64;

/**
 * One object per distinct set of prices a measure {@link createContextMeasure} made estimates with (the profile's
 * `tokenizerFactor`, `imageTokens`, `fileTokens`, `perMessageTokens` and the calibration): two such measures with the
 * same prices get the same object, so what was estimated with one is compared by identity. Undefined for a measure
 * made otherwise, or whose `estimate` was replaced since.
 */
export function measurePrices(measure: ContextMeasure): object | undefined {
  const made = profilePriced.get(measure);
  if (made?.estimate !== measure.estimate) return undefined;
  // Read at each call: the profile is the caller's object.
  const { profile, calibration } = made;
  const key = `${profile.tokenizerFactor}|${profile.imageTokens}|${profile.fileTokens}|${profile.perMessageTokens}|${calibration}`;
  let prices = pricesByKey.get(key);
  if (!prices) {
    if (pricesByKey.size >= PRICES_KEPT) pricesByKey.delete(pricesByKey.keys().next().value!);
    pricesByKey.set(key, (prices = Object.freeze({ key })));
  }
  return prices;
}
