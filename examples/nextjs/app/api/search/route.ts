import { chatErrorResponse } from 'agent-history/ai-sdk';
import { tenantHistory } from '../../../lib/tenant';

export const dynamic = 'force-dynamic';

/** Full-text search over the user's messages (`?q=`). */
export async function GET(request: Request) {
  try {
    const query = (new URL(request.url).searchParams.get('q') ?? '').trim();
    if (query.length === 0) return Response.json({ hits: [] });
    const hits = await (await tenantHistory()).searchMessages(query, { limit: 20 });
    return Response.json({ hits });
  } catch (error) {
    return chatErrorResponse(error);
  }
}
