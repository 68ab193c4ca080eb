import { chatErrorResponse } from 'agent-history/ai-sdk';
import { contextReports } from '../../../../../lib/chat';
import { tenantHistory } from '../../../../../lib/tenant';

export const dynamic = 'force-dynamic';

/** The context inspector's per-step budget reports of the thread. */
export async function GET(_request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    const { threadId } = await params;
    await (await tenantHistory()).getThread(threadId); // 404 for an unknown or foreign thread
    return Response.json({ reports: await contextReports.reports(threadId) });
  } catch (error) {
    return chatErrorResponse(error);
  }
}
