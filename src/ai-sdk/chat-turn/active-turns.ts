import type { StoredMessage } from '../../model/stored-rows.js';

/** A turn streaming in this process: how to stop it and when it is stored. */
export interface ActiveTurn {
  /** The turn's run. */
  runId: string;
  /** The id of the answer being streamed. */
  assistantMessageId: string;
  /** Aborts the model call; the partial answer is then stored as `cancelled`. */
  abort(): void;
  /** Settles when the answer is finalized. */
  done: Promise<StoredMessage>;
}

// On globalThis, so that every bundle of a framework (a Next.js route per entry point) sees the same turns.
const registryKey = Symbol.for('agent-history.active-turns');
const registry: Map<string, ActiveTurn> =
  ((globalThis as Record<symbol, unknown>)[registryKey] as Map<string, ActiveTurn> | undefined) ??
  ((globalThis as Record<symbol, unknown>)[registryKey] = new Map<string, ActiveTurn>());

const keyOf = (tenantId: string, threadId: string) => `${tenantId}:${threadId.toLowerCase()}`;

/** Registers a turn until its answer is finalized. */
export function registerActiveTurn(tenantId: string, threadId: string, turn: ActiveTurn): void {
  const key = keyOf(tenantId, threadId);
  registry.set(key, turn);
  const release = () => {
    if (registry.get(key) === turn) registry.delete(key);
  };
  turn.done.then(release, release);
}

/** The turn streaming in this thread in this process, if any. */
export function getActiveTurn(tenantId: string, threadId: string): ActiveTurn | undefined {
  return registry.get(keyOf(tenantId, threadId));
}
