import { InvalidArgumentError } from './invalid-argument-error.js';
import { NotFoundError } from './not-found-error.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a uuid in its canonical text form. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

// The input checks of the store (and of the in-memory store that imitates it): each throws a typed error naming the argument and the value, before any SQL runs.

/** Throws {@link InvalidArgumentError} unless `value` is a uuid. */
export function assertUuid(argument: string, value: unknown): string {
  if (!isUuid(value)) throw new InvalidArgumentError({ argument, value, message: 'expected a uuid.' });
  return value.toLowerCase();
}

/** Throws {@link InvalidArgumentError} unless `value` is an integer in range. */
export function assertInteger(argument: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError({ argument, value, message: `expected an integer from ${min} to ${max}.` });
  }
  return value;
}

/** Null for undefined or null; otherwise the string, or {@link InvalidArgumentError} (too long, not a string, NUL, lone surrogate). */
export function assertOptionalText(argument: string, value: unknown, maxLength: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > maxLength || value.includes('\u0000') || !value.isWellFormed()) {
    throw new InvalidArgumentError({
      argument,
      value,
      message: `expected a string of at most ${maxLength} characters, without NUL or lone surrogates.`,
    });
  }
  return value;
}

/** A thread id that is not a uuid cannot exist: the same {@link NotFoundError} as a missing one. */
export function assertThreadId(threadId: unknown): string {
  if (!isUuid(threadId)) throw new NotFoundError({ entity: 'thread', id: threadId });
  return threadId.toLowerCase();
}

/** A required short string (a policy version, a hash): typed errors instead of a NOT NULL or encoding failure in SQL. */
export function assertRequiredText(argument: string, value: unknown): string {
  const text = assertOptionalText(argument, value, 200);
  if (text === null || text.length === 0)
    throw new InvalidArgumentError({ argument, value, message: 'expected a non-empty string.' });
  return text;
}

/** Null for undefined or null; otherwise the uuid (lower-cased), or {@link InvalidArgumentError}. */
export function assertOptionalUuid(argument: string, value: unknown): string | null {
  return value === undefined || value === null ? null : assertUuid(argument, value);
}

/**
 * Throws {@link InvalidArgumentError} unless a summary's content is a string with something besides white space,
 * so that a failed summarizer call can never write a summary.
 */
export function assertSummaryContent(content: unknown): string {
  if (typeof content !== 'string' || content.trim().length === 0)
    throw new InvalidArgumentError({
      argument: 'summary.content',
      value: content,
      message: 'a summary must have content.',
    });
  return content;
}

/**
 * Throws {@link InvalidArgumentError} unless a summary's inclusive range `fromSequence`..`throughSequence` lies
 * within a thread of `messageCount` messages.
 */
export function assertSummaryRange(fromSequence: unknown, throughSequence: unknown, messageCount: number): void {
  const from = assertInteger('summary.fromSequence', fromSequence, 1, Math.max(1, messageCount));
  assertInteger('summary.throughSequence', throughSequence, from, messageCount);
}

/**
 * Null for undefined or null; otherwise a user id as {@link assertOptionalText} takes it (at most 200 characters),
 * not starting with U+FEFF: PGlite's decoder drops a leading byte-order mark from every text it reads, so such an
 * id would come back as another user's (`'\uFEFFbob'` read as `'bob'`), and ownership checks compare what is read.
 */
export function assertOptionalUserId(argument: string, value: unknown): string | null {
  const userId = assertOptionalText(argument, value, 200);
  if (userId?.startsWith('\uFEFF'))
    throw new InvalidArgumentError({ argument, value, message: 'a user id cannot start with U+FEFF.' });
  return userId;
}
