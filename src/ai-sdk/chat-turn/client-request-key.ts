/**
 * The stored key of a client's `requestId`: `request:<requestId>`, a namespace apart from the answers' own keys
 * (`answer:`, `edit:`, `regenerate:`), so that no client key can take an answer's key.
 */
export function clientRequestKey(requestId: string | undefined): string | undefined {
  return requestId === undefined ? undefined : `request:${requestId}`;
}
