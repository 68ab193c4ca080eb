import { requireMessage, type MemoryContextState } from './memory-context-state.js';

/**
 * The in-memory redaction: the message's context state becomes `redacted`, its parts empty and its content
 * version one higher, and, as the
 * Postgres store does, every summary whose range covers it and every snapshot whose boundary is at or after it
 * becomes stale. Throws `InvalidArgumentError` for a sequence the thread does not have.
 */
export function redactMemoryMessage(state: MemoryContextState, sequence: number): void {
  const message = requireMessage(state, sequence);
  message.contextState = 'redacted';
  message.message = { ...message.message, parts: [] };
  message.contentVersion = (message.contentVersion ?? 1) + 1;
  for (const summary of state.summaries)
    if (summary.fromSequence <= sequence && sequence <= summary.throughSequence) summary.stale = true;
  // As the Postgres store: a snapshot covers the messages up to its boundary (its tail is read afresh).
  for (const snapshot of state.snapshots) if (snapshot.throughSequence >= sequence) snapshot.stale = true;
}
