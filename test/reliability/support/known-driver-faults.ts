/**
 * postgres-js 3.4.9 (the driver of these suites) has an open bug that a terminated backend can trigger: a write
 * scheduled with `setImmediate` runs after the socket was nulled and throws `TypeError: Cannot read properties of
 * null (reading 'write')` from `nextWrite`, an uncaught exception no caller can catch, and the query it carried
 * may never settle (porsager/postgres#1066, #1154, #1208; fixes proposed in #1168, #1176, #1209). In an
 * application that exception ends the process unless it has an `uncaughtException` handler.
 *
 * The fault suites are about the store, not the driver: while they terminate backends they count these
 * exceptions (and report them) instead of letting the test runner fail on them. Any other uncaught exception
 * still reaches the runner.
 */
export function isKnownDriverCrash(error: unknown): boolean {
  return (
    error instanceof TypeError && error.message.includes("reading 'write'") && (error.stack ?? '').includes('nextWrite')
  );
}

/** Routes known driver crashes to `onCrash` until the returned function is called; everything else goes on as before. */
export function tolerateKnownDriverCrashes(onCrash: (error: Error) => void): () => void {
  const previous = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const handler = (error: Error, origin: NodeJS.UncaughtExceptionOrigin) => {
    if (isKnownDriverCrash(error)) onCrash(error);
    else for (const listener of previous) listener(error, origin);
  };
  process.on('uncaughtException', handler);
  return () => {
    process.removeListener('uncaughtException', handler);
    for (const listener of previous) process.on('uncaughtException', listener);
  };
}

/** Rejects with a `CALL_HUNG` error when `promise` has not settled after `milliseconds` (a query lost by the driver). */
export function withDeadline<VALUE>(promise: Promise<VALUE>, milliseconds: number): Promise<VALUE> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`no answer after ${milliseconds} ms`), { code: 'CALL_HUNG' })),
      milliseconds,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
