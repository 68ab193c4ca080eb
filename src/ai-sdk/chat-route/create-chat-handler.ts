import type { ToolSet, UIMessage } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import { readJsonBody } from './read-request-body.js';
import { parseChatRequest } from './parse-chat-request.js';
import { chatErrorResponse } from './chat-error-response.js';
import { chatThreadId } from '../threads/chat-thread-id.js';
import { requireChatOwner } from '../threads/require-chat-owner.js';
import { stopChat } from '../chat-turn/stop-chat.js';
import { resumeChatRequest, type ResumeRouteContext } from './resume-chat-request.js';
import { streamChatTurn } from '../chat-turn/stream-chat-turn.js';
import type { CreateChatHandlerOptions } from './create-chat-handler-options.js';
import { inSpan } from '../../telemetry/in-span.js';
import { CHAT_SPANS, UNTIL_ANSWER_STORED } from '../chat-turn/chat-spans.js';

/**
 * Route handlers for a chat: `POST` answers a turn (submit, edit or regenerate) as a UI message stream, `GET`
 * replays the answer in progress (with `resumable`), `stop` stops the thread's answer and keeps it. Errors become JSON
 * responses (400, 404, 409, 413). A body over `maxBodyBytes` is refused before it is parsed and before `getHistory`,
 * which gets the thread id and the parsed body to authorize the request before the store is touched.
 *
 * @example
 * // app/api/chat/route.ts
 * const chat = createChatHandler({ getHistory: async () => history.forTenant(await tenantOf()), model: { agent }, tools });
 * export const POST = chat.POST;
 * // app/api/chat/stop/route.ts
 * export const POST = chat.stop;
 * // app/api/chat/[id]/stream/route.ts (with `resumable: true`, for `useChat({ resume: true })`)
 * export const GET = chat.GET;
 */
export function createChatHandler<UI_MESSAGE extends UIMessage = UIMessage, TOOLS extends ToolSet = ToolSet>({
  getHistory,
  maxBodyBytes = 4_194_304,
  getUserId,
  ...settings
}: CreateChatHandlerOptions<UI_MESSAGE, TOOLS>) {
  const readJson = (request: Request) => readJsonBody(request, maxBodyBytes);
  return {
    /** Answers a chat request with a UI message stream. */
    POST: async (request: Request): Promise<Response> => {
      try {
        // The turn's span ends when the answer is stored, after the response has been returned.
        const turn = await inSpan(
          CHAT_SPANS.turn,
          async (span) => {
            const body = parseChatRequest(await readJson(request));
            if (span.isRecording()) span.setAttribute('agent_history.chat.trigger', body.trigger ?? 'submit-message');
            const { userId, history } = await inSpan(CHAT_SPANS.authorize, async () => {
              const userId = (await getUserId?.(request)) ?? undefined;
              const threadId = chatThreadId(body.threadId, { userId });
              const context = { route: 'chat', threadId, chatId: body.threadId, body } as const;
              return { userId, history: await getHistory(request, context) };
            });
            return streamChatTurn<UI_MESSAGE, TOOLS>({ ...settings, ...body, history, userId });
          },
          UNTIL_ANSWER_STORED,
        );
        return turn.toResponse();
      } catch (error) {
        if (error instanceof Response) return error;
        return chatErrorResponse(error);
      }
    },
    /** Resumes the chat's answer in progress (`GET ${api}/${chatId}/stream`, see `resumable`), or 204. */
    GET: (request: Request, context?: ResumeRouteContext): Promise<Response> =>
      inSpan(CHAT_SPANS.resume, async () =>
        resumeChatRequest(request, { getHistory, getUserId, resumable: settings.resumable }, context),
      ),
    /** Stops the answer of `{ threadId }`; responds with the stopped message (or `{ message: null }`). */
    stop: async (request: Request): Promise<Response> => {
      try {
        const body = (await readJson(request)) as { threadId?: unknown; id?: unknown };
        const threadId = body.threadId ?? body.id;
        if (typeof threadId !== 'string')
          throw new InvalidArgumentError({ argument: 'threadId', value: threadId, message: 'expected a thread id.' });
        const userId = (await getUserId?.(request)) ?? undefined;
        const context = {
          route: 'stop',
          threadId: chatThreadId(threadId, { userId }),
          chatId: threadId,
          body: { threadId },
        } as const;
        const history = await getHistory(request, context);
        // As the chat route maps it: with the store's user when the request names none.
        const mapped = chatThreadId(threadId, { userId: userId ?? history.userId });
        await requireChatOwner(history, mapped, userId);
        const stored = await stopChat({ history, threadId: mapped });
        return Response.json({ message: stored?.message ?? null, status: stored?.status ?? null });
      } catch (error) {
        if (error instanceof Response) return error;
        return chatErrorResponse(error);
      }
    },
  };
}
