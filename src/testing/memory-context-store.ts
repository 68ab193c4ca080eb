import { InvalidArgumentError } from '../errors/invalid-argument-error.js';
import { VersionConflictError } from '../errors/version-conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { assertInteger } from '../errors/assert-input.js';
import type {
  ContextMessage,
  ContextSnapshot,
  ContextStore,
  ContextSummary,
  LoadedContext,
  NewSnapshot,
  NewSummary,
} from '../model/context-store.js';
import type { ContextState, MessageStatus } from '../model/stored-rows.js';
import type { ContextUIMessage } from '../model/context-ui-message.js';

// Words too common to make a message relevant (the search is a plain word match, enough for tests and demos).
const stopWords = new Set([
  'the',
  'and',
  'for',
  'our',
  'you',
  'your',
  'what',
  'how',
  'from',
  'with',
  'that',
  'this',
  'are',
  'was',
  'were',
  'has',
  'have',
  'not',
  'but',
  'can',
  'should',
  'would',
  'about',
]);

/** What {@link MemoryContextStore.appendMessage} takes. */
export interface AppendMemoryMessageInput {
  /** The `UIMessage` to store. */
  message: ContextUIMessage;
  /** @default 'completed' */
  status?: MessageStatus;
  /** @default 'eligible' */
  contextState?: ContextState;
  /** @default false */
  pinned?: boolean;
  /** @default null */
  tokenCount?: number | null;
  /** @default null */
  tokenCounterId?: string | null;
}

/** An in-memory {@link ContextStore} for one thread, with helpers to write and inspect it. */
export interface MemoryContextStore extends ContextStore {
  /** Appends a message with the next sequence and returns it. */
  appendMessage(input: AppendMemoryMessageInput): ContextMessage;
  /** Changes a stored message (status, parts, context state, deletion, …). */
  updateMessage(sequence: number, patch: Partial<Omit<ContextMessage, 'sequence'>>): ContextMessage;
  /**
   * Redacts a message: its context state becomes `redacted` and its parts empty, and, as the Postgres store does,
   * every summary whose range covers it and every snapshot whose boundary is at or after it becomes stale.
   */
  redactMessage(sequence: number): void;
  /** Every stored message, oldest first (copies). */
  readonly messages: readonly ContextMessage[];
  /** Every summary written, oldest first (copies). */
  readonly summaries: readonly ContextSummary[];
  /** Every snapshot written, oldest first (copies). */
  readonly snapshots: readonly ContextSnapshot[];
}

/** Options of {@link createMemoryContextStore}. */
export interface CreateMemoryContextStoreOptions {
  /** Messages to start with; their sequences must be 1, 2, 3…. */
  messages?: readonly ContextMessage[];
  /** Test hooks. */
  _internal?: {
    /**
     * Makes summary and snapshot ids.
     * @default a counter: `summary-1`, `snapshot-1`, …
     */
    generateId?: (kind: 'summary' | 'snapshot') => string;
  };
}

/**
 * A {@link ContextStore} kept in memory: it enforces the same contract as the Postgres store (snapshot
 * `expectedVersion` with {@link VersionConflictError}, never overwriting; summaries with content and a valid
 * inclusive range; the replay tail strictly after the snapshot boundary; stale summaries after a redaction).
 * For tests, benchmarks and the offline demo.
 *
 * @example
 * const store = createMemoryContextStore();
 * store.appendMessage({ message: { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } });
 */
export function createMemoryContextStore({
  messages: initial = [],
  _internal = {},
}: CreateMemoryContextStoreOptions = {}): MemoryContextStore {
  const counters = { summary: 0, snapshot: 0 };
  const generateId = _internal.generateId ?? ((kind: 'summary' | 'snapshot') => `${kind}-${++counters[kind]}`);
  const messages: ContextMessage[] = [];
  const summaries: Array<ContextSummary & { createdOrder: number }> = [];
  const snapshots: Array<ContextSnapshot & { stale: boolean }> = [];
  let order = 0;
  initial.forEach((message, index) => {
    if (message.sequence !== index + 1)
      throw new InvalidArgumentError({
        argument: `messages[${index}].sequence`,
        value: message.sequence,
        message: `expected ${index + 1}: sequences are gapless from 1.`,
      });
    messages.push(structuredClone(message));
  });
  const lastSequence = () => messages.length;
  const requireMessage = (sequence: number) => {
    const message = messages[sequence - 1];
    if (!message)
      throw new InvalidArgumentError({
        argument: 'sequence',
        value: sequence,
        message: `the thread has messages 1 to ${lastSequence()}.`,
      });
    return message;
  };
  const currentVersion = () => snapshots.reduce((max, snapshot) => Math.max(max, snapshot.version), 0);
  const strip = <T extends object>(value: T, ...keys: string[]): T => {
    const copy = structuredClone(value) as Record<string, unknown>;
    for (const key of keys) delete copy[key];
    return copy as T;
  };

  return {
    get messages() {
      return messages.map((message) => structuredClone(message));
    },
    get summaries() {
      return summaries.map((summary) => strip(summary, 'createdOrder'));
    },
    get snapshots() {
      return snapshots.map((snapshot) => structuredClone(snapshot));
    },

    appendMessage({
      message,
      status = 'completed',
      contextState = 'eligible',
      pinned = false,
      tokenCount = null,
      tokenCounterId = null,
    }) {
      const stored: ContextMessage = {
        sequence: lastSequence() + 1,
        message: structuredClone(message),
        status,
        contextState,
        pinned,
        tokenCount,
        tokenCounterId,
        deletedAt: null,
      };
      messages.push(stored);
      return structuredClone(stored);
    },

    updateMessage(sequence, patch) {
      const message = requireMessage(sequence);
      Object.assign(message, structuredClone(patch));
      return structuredClone(message);
    },

    redactMessage(sequence) {
      const message = requireMessage(sequence);
      message.contextState = 'redacted';
      message.message = { ...message.message, parts: [] };
      for (const summary of summaries)
        if (summary.fromSequence <= sequence && sequence <= summary.throughSequence) summary.stale = true;
      // As the Postgres store: a snapshot covers the messages up to its boundary (its tail is read afresh).
      for (const snapshot of snapshots) if (snapshot.throughSequence >= sequence) snapshot.stale = true;
    },

    async loadContext(): Promise<LoadedContext> {
      await Promise.resolve();
      const snapshot = [...snapshots].reverse().find((candidate) => !candidate.stale) ?? null;
      const boundary = snapshot?.throughSequence ?? 0;
      const latestSummary =
        summaries
          .filter((summary) => !summary.stale)
          .sort((a, b) => b.throughSequence - a.throughSequence || b.createdOrder - a.createdOrder)[0] ?? null;
      const live = messages.filter((message) => message.deletedAt === null);
      return {
        snapshot: snapshot ? strip(snapshot, 'stale') : null,
        latestSummary: latestSummary ? strip(latestSummary, 'createdOrder') : null,
        tail: live.filter((message) => message.sequence > boundary).map((message) => structuredClone(message)),
        pinned: live
          .filter((message) => message.pinned === true && message.sequence <= boundary)
          .map((message) => structuredClone(message)),
        currentVersion: currentVersion(),
      };
    },

    async writeSummary(input: NewSummary): Promise<ContextSummary> {
      await Promise.resolve();
      if (typeof input.content !== 'string' || input.content.trim() === '')
        throw new InvalidArgumentError({
          argument: 'summary.content',
          value: input.content,
          message: 'a summary must have content.',
        });
      // The same checks and messages as the Postgres store.
      assertInteger('summary.fromSequence', input.fromSequence, 1, Math.max(1, lastSequence()));
      assertInteger('summary.throughSequence', input.throughSequence, input.fromSequence, lastSequence());
      const summary = {
        id: generateId('summary'),
        fromSequence: input.fromSequence,
        throughSequence: input.throughSequence,
        content: input.content,
        tokenCount: input.tokenCount,
        policyVersion: input.policyVersion,
        previousSummaryId: input.previousSummaryId ?? null,
        stale: false,
        createdOrder: ++order,
      };
      summaries.push(summary);
      return strip(summary, 'createdOrder');
    },

    async writeSnapshot(input: NewSnapshot): Promise<ContextSnapshot> {
      await Promise.resolve();
      assertInteger('snapshot.throughSequence', input.throughSequence, 0, lastSequence());
      if (
        input.includedSequences.some(
          (sequence) => !Number.isSafeInteger(sequence) || sequence < 1 || sequence > lastSequence(),
        )
      ) {
        throw new InvalidArgumentError({
          argument: 'snapshot.includedSequences',
          value: input.includedSequences,
          message: `expected sequences from 1 to ${lastSequence()}.`,
        });
      }
      // As the Postgres store: the summary must be the thread's; a stale one makes the snapshot stale.
      const summary = input.summaryId ? summaries.find((candidate) => candidate.id === input.summaryId) : undefined;
      if (input.summaryId && !summary) throw new NotFoundError({ entity: 'summary', id: input.summaryId });
      // Last, as the Postgres store: a bad input is reported as such even when the version is stale too.
      const actualVersion = currentVersion();
      if (input.expectedVersion !== actualVersion)
        throw new VersionConflictError({ entity: 'snapshot', expectedVersion: input.expectedVersion, actualVersion });
      const snapshot: ContextSnapshot & { stale: boolean } = {
        id: generateId('snapshot'),
        version: actualVersion + 1,
        throughSequence: input.throughSequence,
        summaryId: input.summaryId ?? null,
        includedSequences: structuredClone(input.includedSequences),
        pruned: structuredClone(input.pruned ?? []),
        budget: structuredClone(input.budget ?? {}),
        policyVersion: input.policyVersion,
        messagesHash: input.messagesHash,
        stale: summary?.stale ?? false,
      };
      snapshots.push(snapshot);
      return strip(snapshot, 'stale');
    },

    async searchMessages({ query, limit }) {
      await Promise.resolve();
      const words = [
        ...new Set(
          query
            .toLowerCase()
            .split(/[^\p{L}\p{N}]+/u)
            .filter((word) => word.length >= 3 && !stopWords.has(word)),
        ),
      ];
      if (words.length === 0) return [];
      return messages
        .filter((message) => message.deletedAt === null && message.contextState === 'eligible')
        .map((message) => {
          const text = message.message.parts
            .filter((part) => part.type === 'text')
            .map((part) => String(part.text).toLowerCase())
            .join(' ');
          return { message, score: words.reduce((score, word) => score + (text.includes(word) ? 1 : 0), 0) };
        })
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score || b.message.sequence - a.message.sequence)
        .slice(0, limit)
        .map((entry) => structuredClone(entry.message));
    },
  };
}
