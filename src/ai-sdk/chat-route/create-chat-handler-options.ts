import type { ToolSet, UIMessage } from 'ai';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { ChatTurnSettings } from '../chat-turn/chat-turn-options.js';
import type { ChatRequestContext } from './chat-request.js';

/** Options of `createChatHandler`: the settings of every turn, and how to find the request's tenant. */
export interface CreateChatHandlerOptions<
  UI_MESSAGE extends UIMessage = UIMessage,
  TOOLS extends ToolSet = ToolSet,
> extends ChatTurnSettings<UI_MESSAGE, TOOLS> {
  /**
   * The store of the request's tenant (scoped to its user, for an app whose users must not see each other's
   * threads: `forTenant(tenantId, { userId })`). Authenticate and authorize here: it runs after the body is parsed
   * and before the store is touched, with the raw `request` (headers, cookies) and the thread it acts on; throw a
   * `Response` to answer 401/403/404 yourself. A resume request (`GET`) gets `{ route: 'resume', threadId, chatId,
   * body: { threadId: chatId } }`.
   */
  getHistory: (request: Request, context: ChatRequestContext) => TenantHistory | Promise<TenantHistory>;
  /**
   * The largest request body read, in bytes: a larger one is refused with 413 before it is parsed. useChat's default
   * body carries the whole conversation; send only the new message for long threads (docs/ai-sdk.md, "What the
   * route takes from the client's message").
   * @default 4_194_304 (4 MiB)
   */
  maxBodyBytes?: number;
  /**
   * The request's user: the owner of the threads it creates; a thread of another user is answered like a missing one
   * (404, and 204 to a resume request). @default none
   */
  getUserId?: (request: Request) => string | undefined | Promise<string | undefined>;
}
