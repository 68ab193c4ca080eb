import { createUIMessageStreamResponse } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { NotFoundError } from '../../errors/not-found-error.js';
import type { CreateChatHandlerOptions } from './create-chat-handler-options.js';
import { chatErrorResponse } from './chat-error-response.js';
import { chatThreadId } from '../threads/chat-thread-id.js';
import { requireChatOwner } from '../threads/require-chat-owner.js';
import { resumeChatStream } from '../resume/resume-chat-stream.js';

/**
 * What a resume request is authorized and answered with: the chat handler's own `getHistory`, `getUserId` and
 * `resumable` (without `resumable` nothing is resumable, and every request is answered 204).
 */
export type ResumeChatRequestOptions = Pick<CreateChatHandlerOptions, 'getHistory' | 'getUserId' | 'resumable'>;

/** The route context Next.js passes to a handler of `app/api/chat/[id]/stream/route.ts`. */
export interface ResumeRouteContext {
  /** The dynamic segments (`{ id }`), or a promise of them (Next.js 15 and later). */
  params?: Record<string, string | string[] | undefined> | Promise<Record<string, string | string[] | undefined>>;
}

/**
 * Answers useChat's resume request (`GET ${api}/${chatId}/stream`, sent by `useChat({ resume: true })` on mount):
 * the answer in progress replayed from its start as a UI message stream (server-sent events, the message id in
 * `x-agent-history-message-id`), or 204 when nothing is streaming. A missing thread, another tenant's and another
 * user's are all 204 too (a chat made on the client has no thread before its first message; and no existence oracle).
 */
export async function resumeChatRequest(
  request: Request,
  { getHistory, getUserId, resumable }: ResumeChatRequestOptions,
  context: ResumeRouteContext = {},
): Promise<Response> {
  try {
    const chatId = await chatIdOf(request, context);
    const userId = (await getUserId?.(request)) ?? undefined;
    const routeThreadId = chatThreadId(chatId, { userId });
    const history = await getHistory(request, {
      route: 'resume',
      threadId: routeThreadId,
      chatId,
      body: { threadId: chatId },
    });
    if (!resumable) return new Response(null, { status: 204 });
    // As the chat route maps it: with the store's user when the request names none.
    const threadId = chatThreadId(chatId, { userId: userId ?? history.userId });
    await requireChatOwner(history, threadId, userId);
    const options = resumable === true ? {} : resumable;
    const resumed = await resumeChatStream({ ...options, history, threadId, abortSignal: request.signal });
    if (!resumed) return new Response(null, { status: 204 });
    return createUIMessageStreamResponse({
      stream: resumed.stream,
      headers: { 'x-agent-history-thread-id': threadId, 'x-agent-history-message-id': resumed.messageId },
    });
  } catch (error) {
    if (error instanceof Response) return error;
    if (error instanceof NotFoundError) return new Response(null, { status: 204 });
    return chatErrorResponse(error);
  }
}

// The chat id: Next.js's `[id]` segment, else the path segment before `/stream`, else `?id=` or `?threadId=`.
async function chatIdOf(request: Request, context: ResumeRouteContext): Promise<string> {
  const params = await context.params;
  const url = new URL(request.url);
  const segments = url.pathname.split('/').filter(Boolean);
  const fromPath = segments.at(-1) === 'stream' && segments.length >= 2 ? segments.at(-2) : undefined;
  const raw =
    params?.id ?? params?.threadId ?? fromPath ?? url.searchParams.get('id') ?? url.searchParams.get('threadId');
  const value = Array.isArray(raw) ? raw[0] : raw;
  let chatId: string | undefined;
  try {
    chatId = value === undefined || value === null ? undefined : decodeURIComponent(value);
  } catch {
    chatId = undefined;
  }
  if (chatId === undefined || chatId.length === 0)
    throw new InvalidArgumentError({ argument: 'chatId', value, message: 'expected the chat id in the URL.' });
  return chatId;
}
