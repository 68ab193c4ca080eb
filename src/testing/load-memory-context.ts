import type { LoadedContext } from '../model/context-store.js';
import { currentVersion, strip, type MemoryContextState } from './memory-context-state.js';

/**
 * The in-memory `loadContext`, as the Postgres store's: the newest valid snapshot, the newest valid summary (by
 * range end, then by order written), the live messages strictly after the snapshot's inclusive boundary and the
 * pinned live ones at or before it, all copies.
 */
export async function loadMemoryContext(state: MemoryContextState): Promise<LoadedContext> {
  await Promise.resolve();
  const snapshot = [...state.snapshots].reverse().find((candidate) => !candidate.stale) ?? null;
  const boundary = snapshot?.throughSequence ?? 0;
  const latestSummary =
    state.summaries
      .filter((summary) => !summary.stale)
      .sort((a, b) => b.throughSequence - a.throughSequence || b.createdOrder - a.createdOrder)[0] ?? null;
  const live = state.messages.filter((message) => message.deletedAt === null);
  return {
    snapshot: snapshot ? strip(snapshot, 'stale') : null,
    latestSummary: latestSummary ? strip(latestSummary, 'createdOrder') : null,
    tail: live.filter((message) => message.sequence > boundary).map((message) => structuredClone(message)),
    pinned: live
      .filter((message) => message.pinned === true && message.sequence <= boundary)
      .map((message) => structuredClone(message)),
    currentVersion: currentVersion(state),
  };
}
