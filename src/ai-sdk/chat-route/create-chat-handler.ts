import type { ToolSet, UIMessage } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';
import type { TenantHistory } from '../../store/tenant-history.js';
import { readBodyText } from './chat-body-too-large-error.js';
import { chatErrorResponse } from './chat-error-response.js';
import { chatThreadId } from '../threads/chat-thread-id.js';
import { requireChatOwner } from '../threads/ensure-chat-thread.js';
import type { ChatTrigger } from '../chat-turn/plan-chat-turn.js';
import { stopChat } from '../chat-turn/stop-chat.js';
import { resumeChatRequest, type ResumeRouteContext } from './resume-chat-request.js';
import { streamChatTurn, type ChatTurnSettings } from '../chat-turn/stream-chat-turn.js';
import { assertJsonDepth } from '../../store/validate-message.js';

/** The body a chat route accepts. useChat's default body (`{ id, messages, trigger, messageId }`) works too. */
export interface ChatRequestBody {
  /** The thread (useChat's `id`). */
  threadId: string;
  /** The new user message; only this one is needed, the history is in the store. */
  message?: unknown;
  /** @default 'submit-message' */
  trigger?: ChatTrigger;
  /** The edited user message, or the assistant message to regenerate. */
  messageId?: string;
  /** An idempotency key for the request. */
  requestId?: string;
}

/**
 * What `getHistory` is told about a request: read, size-checked and parsed, but nothing read from or written to the
 * store yet, so the app can authorize the request for this thread (throw a `Response`: 403, 404, …).
 */
export interface ChatRequestContext {
  /** `'chat'` for `POST` (a turn), `'stop'` for `stop`, `'resume'` for `GET` (useChat's resume). */
  route: 'chat' | 'stop' | 'resume';
  /** The thread the request acts on: the client's chat id mapped by `chatThreadId` (a uuid stays itself). */
  threadId: string;
  /** The chat id as the client sent it (useChat's `id`). */
  chatId: string;
  /** The parsed body (`stop`: only `threadId`). */
  body: ChatRequestBody;
}

/** Options of {@link createChatHandler}: the settings of every turn, and how to find the request's tenant. */
export interface CreateChatHandlerOptions<
  UI_MESSAGE extends UIMessage = UIMessage,
  TOOLS extends ToolSet = ToolSet,
> extends ChatTurnSettings<UI_MESSAGE, TOOLS> {
  /**
   * The store of the request's tenant (scoped to its user, for an app whose users must not see each other's
   * threads: `forTenant(tenantId, { userId })`). Authenticate and authorize here: it runs after the body is parsed
   * and before the store is touched, with the raw `request` (headers, cookies) and the thread it acts on; throw a
   * `Response` to answer 401/403/404 yourself.
   */
  getHistory: (request: Request, context: ChatRequestContext) => TenantHistory | Promise<TenantHistory>;
  /**
   * The largest request body read, in bytes: a larger one is refused with 413 before it is parsed. useChat's default
   * body carries the whole conversation; send only the new message for long threads (docs/ai-sdk.md, "What the
   * route takes from the client's message").
   * @default 4_194_304 (4 MiB)
   */
  maxBodyBytes?: number;
  /** The request's user: the owner of the threads it creates; a thread of another user is 404. @default none */
  getUserId?: (request: Request) => string | undefined | Promise<string | undefined>;
}

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
        const body = parseChatRequest(await readJson(request));
        const context = { route: 'chat', threadId: chatThreadId(body.threadId), chatId: body.threadId, body } as const;
        const history = await getHistory(request, context);
        const userId = await getUserId?.(request);
        const turn = await streamChatTurn<UI_MESSAGE, TOOLS>({ ...settings, ...body, history, userId });
        return turn.toResponse();
      } catch (error) {
        if (error instanceof Response) return error;
        return chatErrorResponse(error);
      }
    },
    /** Resumes the chat's answer in progress (`GET ${api}/${chatId}/stream`, see `resumable`), or 204. */
    GET: (request: Request, context?: ResumeRouteContext): Promise<Response> =>
      resumeChatRequest(request, { getHistory, getUserId, resumable: settings.resumable }, context),
    /** Stops the answer of `{ threadId }`; responds with the stopped message (or `{ message: null }`). */
    stop: async (request: Request): Promise<Response> => {
      try {
        const body = (await readJson(request)) as { threadId?: unknown; id?: unknown };
        const threadId = body.threadId ?? body.id;
        if (typeof threadId !== 'string')
          throw new InvalidArgumentError({ argument: 'threadId', value: threadId, message: 'expected a thread id.' });
        const context = {
          route: 'stop',
          threadId: chatThreadId(threadId),
          chatId: threadId,
          body: { threadId },
        } as const;
        const history = await getHistory(request, context);
        await requireChatOwner(history, context.threadId, await getUserId?.(request));
        const stored = await stopChat({ history, threadId: chatThreadId(threadId) });
        return Response.json({ message: stored?.message ?? null, status: stored?.status ?? null });
      } catch (error) {
        if (error instanceof Response) return error;
        return chatErrorResponse(error);
      }
    },
  };
}

async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await readBodyText(request, limit);
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidArgumentError({ argument: 'body', value: '…', message: 'expected a JSON body.' });
  }
}

/** Reads a chat request body: ours, or useChat's default one (the last of `messages` is the new message). */
export function parseChatRequest(body: unknown): ChatRequestBody {
  if (typeof body !== 'object' || body === null)
    throw new InvalidArgumentError({ argument: 'body', value: body, message: 'expected a JSON object.' });
  const raw = body as Record<string, unknown>;
  const threadId = raw.threadId ?? raw.id;
  if (typeof threadId !== 'string')
    throw new InvalidArgumentError({ argument: 'threadId', value: threadId, message: 'expected a thread id.' });
  const trigger = raw.trigger ?? 'submit-message';
  if (trigger !== 'submit-message' && trigger !== 'regenerate-message') {
    throw new InvalidArgumentError({
      argument: 'trigger',
      value: trigger,
      message: 'expected submit-message or regenerate-message.',
    });
  }
  const optionalString = (name: string) => {
    const value = raw[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string')
      throw new InvalidArgumentError({ argument: name, value, message: 'expected a string.' });
    return value;
  };
  const message =
    raw.message ?? (Array.isArray(raw.messages) && trigger === 'submit-message' ? raw.messages.at(-1) : undefined);
  assertJsonDepth(message, 'message');
  return { threadId, trigger, message, messageId: optionalString('messageId'), requestId: optionalString('requestId') };
}
