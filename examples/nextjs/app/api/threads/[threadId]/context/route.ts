import { readInspector } from '../../../../../lib/inspector';
import { tenantHistory } from '../../../../../lib/tenant';
import { errorResponse } from '../../../../../lib/errors';

export const dynamic = 'force-dynamic';

/** The context inspector: the thread's stored runs and snapshots, by turn (newest first). */
export async function GET(_request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    const { threadId } = await params;
    await (await tenantHistory()).getThread(threadId); // 404 for an unknown or foreign thread
    return Response.json({ turns: await readInspector(threadId) });
  } catch (error) {
    return errorResponse(error);
  }
}
