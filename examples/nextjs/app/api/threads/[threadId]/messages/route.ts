import { loadThreadPage } from 'agent-history/ai-sdk';
import { PAGE_SIZE } from '../../../../../lib/chat';
import { tenantHistory } from '../../../../../lib/tenant';
import { metadataSchema, tools, type ChatMessage } from '../../../../../lib/tools';
import { errorResponse } from '../../../../../lib/errors';

export const dynamic = 'force-dynamic';

/** One page of the thread, older than `?before=<sequence>`, validated. */
export async function GET(request: Request, { params }: { params: Promise<{ threadId: string }> }) {
  try {
    const { threadId } = await params;
    const before = new URL(request.url).searchParams.get('before');
    const page = await loadThreadPage<ChatMessage>({
      history: await tenantHistory(),
      threadId,
      limit: PAGE_SIZE,
      before: before === null ? undefined : Number(before),
      tools,
      metadataSchema,
    });
    return Response.json(page);
  } catch (error) {
    return errorResponse(error);
  }
}
