import { tenantHistory } from '../../../lib/tenant';
import { errorResponse } from '../../../lib/errors';

export const dynamic = 'force-dynamic';

/** The user's threads, newest activity first. */
export async function GET(request: Request) {
  try {
    const cursor = new URL(request.url).searchParams.get('cursor') ?? undefined;
    const page = await (await tenantHistory()).listThreads({ limit: 50, cursor });
    return Response.json({
      threads: page.threads.map(({ id, title, messageCount, lastMessageAt }) => ({
        id,
        title,
        messageCount,
        lastMessageAt,
      })),
      nextCursor: page.nextCursor,
    });
  } catch (error) {
    return errorResponse(error);
  }
}

/** A new, empty thread (the example's "New chat" does not need it: the first message creates the thread). */
export async function POST(request: Request) {
  try {
    const body = (await request.json().catch(() => ({}))) as { title?: string };
    const thread = await (await tenantHistory()).createThread({ title: body.title ?? 'New chat' });
    return Response.json({ id: thread.id }, { status: 201 });
  } catch (error) {
    return errorResponse(error);
  }
}
