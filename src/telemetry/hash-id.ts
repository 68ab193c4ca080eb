import { createHash } from 'node:crypto';

/**
 * An id as a span attribute may carry it: the first 16 hex digits of its SHA-256, so that the spans of one thread
 * can be found together without the id itself leaving the application. Only for random ids (uuids): a hash of a
 * guessable value (a user id, an email) could be reversed by trying candidates, so those are never recorded. Internal.
 */
export function hashId(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 16);
}
