import { context } from '@opentelemetry/api';

/** One append's place in its thread's lane. */
export interface AppendLaneTurn {
  /**
   * Runs `send` (hands the append on) once every earlier append to the thread has been handed on or has left, and
   * settles as what `send` returns. Appends that are ready behind it are handed on in the same synchronous run, so a
   * burst reaches the write combiner together, as it would without the lane.
   */
  handOn<RESULT>(send: () => Promise<RESULT>): Promise<RESULT>;
  /** Gives up the place without handing on (the append failed before it was ready). */
  leave(): void;
}

/** Keeps the appends to one thread in the order they were called; see {@link createAppendLanes}. */
export interface AppendLanes {
  enter(key: string): AppendLaneTurn;
}

interface Turn {
  done: boolean;
  /** Its place was given up for it: it was not ready within the lane's patience. It is handed on when ready. */
  expired?: boolean;
  go?: () => void;
}

/** How long an append may take to get ready before the appends behind it stop waiting for it, in ms. */
const DEFAULT_PATIENCE_MS = 10_000;

/**
 * Lanes that hand appends to the same thread on (to the write combiner or the database) in the order they were
 * called, while their work before that (checks, token counting, which gives the event loop turns for a long message)
 * runs side by side: a long message followed by a short one to the same thread takes the lower sequence, as it would
 * have without the turns. Appends to other threads never wait for each other. An append that is not ready within
 * `patienceMs` (an app's message check that hangs) loses its place, so the appends behind it are not held up; it is
 * handed on whenever it is ready. An empty lane is forgotten.
 */
export function createAppendLanes({ patienceMs = DEFAULT_PATIENCE_MS }: { patienceMs?: number } = {}): AppendLanes {
  const lanes = new Map<string, Turn[]>();
  const advance = (key: string, lane: Turn[]) => {
    for (;;) {
      const front = lane[0];
      if (!front) {
        if (lanes.get(key) === lane) lanes.delete(key);
        return;
      }
      if (front.done) {
        lane.shift();
        continue;
      }
      const go = front.go;
      if (!go) return;
      front.done = true;
      front.go = undefined;
      go();
    }
  };
  return {
    enter(key) {
      let lane = lanes.get(key);
      if (!lane) lanes.set(key, (lane = []));
      const turn: Turn = { done: false };
      const own = lane;
      own.push(turn);
      const patience = setTimeout(() => {
        if (turn.done || turn.go) return;
        turn.done = true;
        turn.expired = true;
        advance(key, own);
      }, patienceMs);
      (patience as { unref?: () => void }).unref?.(); // a number, without unref, outside Node
      return {
        handOn: <RESULT>(send: () => Promise<RESULT>) =>
          new Promise<RESULT>((resolve, reject) => {
            clearTimeout(patience);
            // Run by whichever append frees the lane: `send` runs in this caller's async context, not that one's.
            const caller = context.active();
            turn.go = () =>
              context.with(caller, () => {
                try {
                  resolve(send());
                } catch (error) {
                  reject(error);
                }
              });
            if (turn.expired) return turn.go();
            advance(key, own);
          }),
        leave() {
          clearTimeout(patience);
          if (turn.done) return;
          turn.done = true;
          turn.go = undefined;
          advance(key, own);
        },
      };
    },
  };
}
