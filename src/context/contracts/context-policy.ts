import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { MessageStatus } from '../../model/stored-rows.js';
import type { ContextMemoryPolicy, ContextMemoryPolicyInput } from './context-memory-policy.js';

export type { ContextMemoryPolicy, ContextMemoryPolicyInput, ContextRecallPolicy } from './context-memory-policy.js';

/** What the prune stage removes (losslessly for validity: tool calls and results always go in pairs). */
export interface ContextPrunePolicy {
  /**
   * Which reasoning to drop: outside the newest `reasoningTurns` turns, the same but only when the context does
   * not fit the budget (a turn is then sent again as it was first sent, which keeps a provider's prompt cache),
   * everywhere, or none. Providers ignore (or reject) old reasoning, so dropping it is the cheapest saving.
   * @default 'when-over-budget'
   */
  reasoning: 'outside-newest-turns' | 'when-over-budget' | 'all' | 'none';
  /**
   * Turns whose reasoning is kept.
   * @default 1
   */
  reasoningTurns: number;
  /**
   * When to drop old tool traffic (calls, results and approvals outside the newest `toolTrafficTurns` turns):
   * only when the context does not fit (then oldest call first, in chunks of about `1 − summary.targetRatio` of the
   * budget, the fewest that fit it, so that the cut stays where it was until the budget is reached again; with
   * `targetRatio: 1`, call by call, the last call needed becoming a preview instead when that is enough), always,
   * or never.
   * @default 'when-over-budget'
   */
  toolTraffic: 'when-over-budget' | 'outside-newest-turns' | 'none';
  /**
   * Turns whose tool traffic is kept.
   * @default 2
   */
  toolTrafficTurns: number;
  /**
   * Whether messages left empty are removed (the current input is always kept).
   * @default 'remove'
   */
  emptyMessages: 'remove' | 'keep';
}

/** How summaries are made and sized. */
export interface ContextSummaryPolicy {
  /**
   * Tokens reserved for a new summary when turns are folded into one.
   * @default 2000
   */
  reserveTokens: number;
  /**
   * When the context must be compacted (summarized, or trimmed without a summarizer), keep the newest turns up to
   * this share of the budget, so that the next steps and turns fit without compacting again: fewer summaries and
   * snapshots, and a stable prefix for provider prompt caches.
   * @default 0.6
   */
  targetRatio: number;
  /**
   * Where a new request starts: `previous-cut` starts from the context the newest snapshot records (its trimmed
   * turns left out, its pruning and previews applied again) with the messages stored since after it, so that the
   * request extends what the previous one sent and compacts again only once it is over the budget; `thread` starts
   * from the whole thread after the summary every time. Carried only from a snapshot of the same policy `version`,
   * summary and budget.
   * @default 'previous-cut'
   */
  startFrom: 'previous-cut' | 'thread';
  /**
   * A summarizer call that takes longer is aborted and counts as failed.
   * @default 60000
   */
  timeoutMs: number;
  /**
   * The largest transcript one summarizer call receives, in tokens; more turns are folded in several rounds.
   * @default 32000
   */
  inputMaxTokens: number;
  /**
   * Characters of one tool input or output shown in the summarizer's transcript.
   * @default 2000
   */
  toolOutputCharacters: number;
}

/** How oversized tool outputs are shortened when even the newest turn does not fit. */
export interface ContextToolOutputPreviewPolicy {
  /**
   * The first preview size, in raw tokens.
   * @default 1000
   */
  tokens: number;
  /**
   * Previews are halved down to this size while the context does not fit.
   * @default 64
   */
  minimumTokens: number;
  /**
   * `fixed`: a tool output or input is previewed at `tokens`, so it is the same preview every time it is sent
   * (which keeps a provider's prompt cache), and older rounds go before a preview is made smaller; a preview is
   * halved only when the newest turn does not fit otherwise. `fit`: previews are halved as far as the context needs,
   * then grow back into the room left, so the budget is used to the last token but a preview may change size from
   * one step to the next.
   * @default 'fixed'
   */
  sizing: 'fixed' | 'fit';
}

/** Every knob of the context engine. */
export interface ContextPolicy {
  /**
   * Stored with every summary and snapshot. Change it when you change the policy.
   * @default 'agent-history/context-v1'
   */
  version: string;
  /**
   * Assistant statuses that may reach the model (see {@link filterStoredMessages}).
   * @default ['completed', 'cancelled', 'failed']
   */
  assistantStatuses: MessageStatus[];
  /** See {@link ContextPrunePolicy}. */
  prune: ContextPrunePolicy;
  /** See {@link ContextSummaryPolicy}. */
  summary: ContextSummaryPolicy;
  /** See {@link ContextMemoryPolicy}. */
  memory: ContextMemoryPolicy;
  /** See {@link ContextToolOutputPreviewPolicy}. */
  toolOutputPreview: ContextToolOutputPreviewPolicy;
  /**
   * What a snapshot write that lost to a concurrent writer does: throw the `VersionConflictError`, or record it
   * in the report and go on (the model call does not depend on the snapshot).
   * @default 'throw'
   */
  snapshotConflicts: 'throw' | 'report';
}

/** A partial policy: any field left out takes its default. */
export type ContextPolicyInput = {
  [KEY in Exclude<keyof ContextPolicy, 'memory'>]?: ContextPolicy[KEY] extends readonly unknown[] | string
    ? ContextPolicy[KEY]
    : Partial<ContextPolicy[KEY]>;
} & {
  /** See {@link ContextMemoryPolicy}. */
  memory?: ContextMemoryPolicyInput;
};

/** The defaults of {@link ContextPolicy}. */
export const defaultContextPolicy: Readonly<ContextPolicy> = Object.freeze({
  version: 'agent-history/context-v1',
  assistantStatuses: ['completed', 'cancelled', 'failed'],
  prune: {
    reasoning: 'when-over-budget',
    reasoningTurns: 1,
    toolTraffic: 'when-over-budget',
    toolTrafficTurns: 2,
    emptyMessages: 'remove',
  },
  summary: {
    reserveTokens: 2000,
    targetRatio: 0.6,
    startFrom: 'previous-cut',
    timeoutMs: 60_000,
    inputMaxTokens: 32_000,
    toolOutputCharacters: 2000,
  },
  memory: {
    mode: 'off',
    limit: 5,
    maxTokens: 2000,
    messageCharacters: 1000,
    workingMemory: 'off',
    recall: { mode: 'off', limit: 5, maxTokens: 2000 },
  },
  toolOutputPreview: { tokens: 1000, minimumTokens: 64, sizing: 'fixed' },
  snapshotConflicts: 'throw',
} satisfies ContextPolicy);

/** Fills a partial policy with the defaults and checks every value; a bad one throws `InvalidArgumentError` naming it. */
export function resolveContextPolicy(input: ContextPolicyInput = {}): ContextPolicy {
  if (input.assistantStatuses !== undefined && !Array.isArray(input.assistantStatuses))
    fail('policy.assistantStatuses', input.assistantStatuses, 'expected an array of message statuses.');
  const policy: ContextPolicy = {
    version: input.version ?? defaultContextPolicy.version,
    assistantStatuses: [...(input.assistantStatuses ?? defaultContextPolicy.assistantStatuses)],
    prune: { ...defaultContextPolicy.prune, ...input.prune },
    summary: { ...defaultContextPolicy.summary, ...input.summary },
    memory: {
      ...defaultContextPolicy.memory,
      ...input.memory,
      recall: { ...defaultContextPolicy.memory.recall, ...input.memory?.recall },
    },
    toolOutputPreview: { ...defaultContextPolicy.toolOutputPreview, ...input.toolOutputPreview },
    snapshotConflicts: input.snapshotConflicts ?? defaultContextPolicy.snapshotConflicts,
  };
  if (typeof policy.version !== 'string' || policy.version === '')
    fail('policy.version', policy.version, 'expected a non-empty string.');
  oneOf('policy.prune.reasoning', policy.prune.reasoning, ['outside-newest-turns', 'when-over-budget', 'all', 'none']);
  oneOf('policy.prune.toolTraffic', policy.prune.toolTraffic, ['when-over-budget', 'outside-newest-turns', 'none']);
  oneOf('policy.prune.emptyMessages', policy.prune.emptyMessages, ['remove', 'keep']);
  oneOf('policy.summary.startFrom', policy.summary.startFrom, ['previous-cut', 'thread']);
  oneOf('policy.memory.mode', policy.memory.mode, ['off', 'search']);
  oneOf('policy.toolOutputPreview.sizing', policy.toolOutputPreview.sizing, ['fixed', 'fit']);
  oneOf('policy.memory.workingMemory', policy.memory.workingMemory, ['include', 'off']);
  oneOf('policy.memory.recall.mode', policy.memory.recall.mode, ['auto', 'off']);
  integer('policy.memory.recall.limit', policy.memory.recall.limit, 1);
  integer('policy.memory.recall.maxTokens', policy.memory.recall.maxTokens, 1);
  oneOf('policy.snapshotConflicts', policy.snapshotConflicts, ['throw', 'report']);
  for (const status of policy.assistantStatuses)
    oneOf('policy.assistantStatuses', status, ['pending', 'streaming', 'completed', 'failed', 'cancelled']);
  integer('policy.prune.reasoningTurns', policy.prune.reasoningTurns, 0);
  integer('policy.prune.toolTrafficTurns', policy.prune.toolTrafficTurns, 0);
  integer('policy.summary.reserveTokens', policy.summary.reserveTokens, 0);
  integer('policy.summary.timeoutMs', policy.summary.timeoutMs, 1);
  integer('policy.summary.inputMaxTokens', policy.summary.inputMaxTokens, 256);
  integer('policy.summary.toolOutputCharacters', policy.summary.toolOutputCharacters, 0);
  integer('policy.memory.limit', policy.memory.limit, 1);
  integer('policy.memory.maxTokens', policy.memory.maxTokens, 1);
  integer('policy.memory.messageCharacters', policy.memory.messageCharacters, 1);
  integer('policy.toolOutputPreview.minimumTokens', policy.toolOutputPreview.minimumTokens, 16);
  integer('policy.toolOutputPreview.tokens', policy.toolOutputPreview.tokens, policy.toolOutputPreview.minimumTokens);
  const { targetRatio } = policy.summary;
  if (typeof targetRatio !== 'number' || !(targetRatio > 0 && targetRatio <= 1))
    fail('policy.summary.targetRatio', targetRatio, 'expected a number above 0 and at most 1.');
  return policy;
}

function fail(argument: string, value: unknown, message: string): never {
  throw new InvalidArgumentError({ argument, value, message });
}

function oneOf(argument: string, value: unknown, allowed: readonly string[]): void {
  if (!allowed.includes(value as string))
    fail(argument, value, `expected one of ${allowed.map((item) => `'${item}'`).join(', ')}.`);
}

function integer(argument: string, value: unknown, minimum: number): void {
  if (!Number.isSafeInteger(value) || (value as number) < minimum)
    fail(argument, value, `expected an integer of at least ${minimum}.`);
}
