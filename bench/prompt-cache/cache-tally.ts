// Counts, request by request, what a provider's prompt cache could serve of each request, in two cache models.
// OpenAI: the longest prefix of whole messages shared with the previous request, in its blocks (nothing below
// 1,024 tokens, then 128-token increments). Anthropic: explicit breakpoints, one on the last message of every
// request (as the AI SDK's `providerOptions.anthropic.cacheControl` is usually placed); a request reads the
// previous request's cache entry when the whole previous request is a prefix of it within the breakpoint's
// lookback of 20 blocks (counted here as messages), and only from 1,024 tokens. Tokens are the independent count
// of test/support/count-sent-tokens.ts plus the instructions and tool definitions.
import type { ModelMessage } from 'ai';
import { fixedTokens, profile } from '../../test/support/check-generated-context.js';
import { countSentTokens } from '../../test/support/count-sent-tokens.js';

export interface Tally {
  calls: number;
  sent: number;
  cacheableOpenAI: number;
  cacheableAnthropic: number;
  overBudget: number;
  /** Calls whose request does not start with the whole previous request (it was cut or rewritten). */
  compactions: number;
}

export const emptyTally = (): Tally => ({
  calls: 0,
  sent: 0,
  cacheableOpenAI: 0,
  cacheableAnthropic: 0,
  overBudget: 0,
  compactions: 0,
});

export const tokensOf = (messages: readonly ModelMessage[]) =>
  countSentTokens(messages as never, profile) + fixedTokens;

/** Tokens OpenAI caches of a shared prefix. */
export const openAIBlocks = (prefixTokens: number) =>
  prefixTokens < 1024 ? 0 : 1024 + Math.floor((prefixTokens - 1024) / 128) * 128;

const anthropicLookback = 20;

// What the provider sees of a message (the engine's reference is never sent).
const sentForm = ({ role, content, providerOptions }: ModelMessage) =>
  JSON.stringify({ role, content, providerOptions });

/** Adds one request to the tally. */
export function record(
  tally: Tally,
  previous: readonly ModelMessage[] | undefined,
  sent: readonly ModelMessage[],
  budget: number,
): void {
  const total = tokensOf(sent);
  tally.calls += 1;
  tally.sent += total;
  if (total > budget) tally.overBudget += 1;
  if (!previous) return;
  let shared = 0;
  while (shared < sent.length && shared < previous.length && sentForm(sent[shared]!) === sentForm(previous[shared]!))
    shared += 1;
  const prefixTokens = Math.min(total, tokensOf(sent.slice(0, shared)));
  tally.cacheableOpenAI += openAIBlocks(prefixTokens);
  const appended = shared === previous.length;
  if (!appended) tally.compactions += 1;
  if (appended && sent.length - shared <= anthropicLookback && prefixTokens >= 1024)
    tally.cacheableAnthropic += prefixTokens;
}
