// Next.js calls `register()` once when the server starts, before the first request (see
// https://nextjs.org/docs/app/guides/open-telemetry). The OpenTelemetry setup is Node-only: import it there alone.
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs') await import('./lib/tracing');
}
