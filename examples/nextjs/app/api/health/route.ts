import { pingDatabase } from '../../../lib/database';
import { errorResponse } from '../../../lib/errors';

export const dynamic = 'force-dynamic';

/**
 * Readiness: 200 when the store is open, checked and the database answers; else the 503 every route answers
 * (lib/errors.ts). For a load balancer's probe, and for proxy.ts, which asks it before a page renders.
 */
export async function GET() {
  try {
    await pingDatabase();
    return Response.json({ ok: true });
  } catch (error) {
    return errorResponse(error);
  }
}
