import type { UIMessage } from 'ai';
import type { TenantHistory } from '../../store/tenant-history.js';
import type { ContextState, MessageStatus } from '../../model/stored-rows.js';
import type { ChatWindowMessage } from '../../store/list-chat-messages.js';
import { toUIMessage } from './ui-message-mapping.js';
import { validateChatMessages, type ChatSchemas } from './validate-chat-messages.js';

/** Options of {@link loadThreadPage}; the schemas validate the stored messages as `useChat` will. */
export interface LoadThreadPageOptions<UI_MESSAGE extends UIMessage> extends ChatSchemas<UI_MESSAGE> {
  /** The tenant's store. */
  history: TenantHistory;
  /** The thread to read (`NotFoundError` for a missing or foreign one). */
  threadId: string;
  /** @default 30 (1 to 500) */
  limit?: number;
  /** The previous page's `nextCursor`: only messages older than it. */
  before?: number;
  /**
   * `visible`: what a chat window shows, leaving out messages taken out of the context (answers superseded by a
   * regenerate, messages superseded by an edit). `all`: the whole log.
   * @default 'visible'
   */
  include?: 'visible' | 'all';
}

/** The lifecycle of one message of a page, beside the `UIMessage` itself. */
export interface UIMessagePageEntry {
  /** The message's id. */
  id: string;
  /** Its place in the thread (1, 2, 3… with no gap). */
  sequence: number;
  /** `completed`, or `cancelled` for a stopped answer, `failed`, `pending`, `streaming`. */
  status: MessageStatus;
  /** Whether the model still sees it: `eligible`, `excluded` (edited, regenerated) or `redacted`. */
  contextState: ContextState;
  /** Why it was excluded, such as `superseded-by-edit`; null when it was not. */
  exclusionReason: string | null;
  /** When it was stored. */
  createdAt: Date;
}

/** One page of a thread for a chat window, as {@link loadThreadPage} returns it. */
export interface UIMessagePage<UI_MESSAGE extends UIMessage> {
  /** Validated messages, oldest first, ready for `useChat({ messages })`. */
  messages: UI_MESSAGE[];
  /** The same messages' stored state (status: a stopped answer is `cancelled`), in the same order. */
  entries: UIMessagePageEntry[];
  /** Pass as `before` for the next, older page; null on the first page of the thread. */
  nextCursor: number | null;
  /** Stored messages that no longer pass the schemas (left out of `messages`), with the reason. */
  invalid: Array<{ id: string; sequence: number; error: string }>;
}

/**
 * Loads one page of a thread for a chat window: keyset-paged on the sequence (never OFFSET), newest page
 * first, each page oldest first, validated against the application's schemas. A stored message that fails
 * validation (a schema changed since it was written) is reported in `invalid` instead of failing the page.
 *
 * @example
 * const page = await loadThreadPage({ history: store, threadId, tools, metadataSchema });
 * return <Chat initialMessages={page.messages} cursor={page.nextCursor} />;
 */
export async function loadThreadPage<UI_MESSAGE extends UIMessage = UIMessage>({
  history,
  threadId,
  limit = 30,
  before,
  include = 'visible',
  tools,
  metadataSchema,
  dataSchemas,
}: LoadThreadPageOptions<UI_MESSAGE>): Promise<UIMessagePage<UI_MESSAGE>> {
  const page = await history.listChatMessages(threadId, { limit, before, onlyEligible: include === 'visible' });
  const stored = page.messages;
  const schemas = { tools, metadataSchema, dataSchemas } as ChatSchemas<UI_MESSAGE>;
  const result: UIMessagePage<UI_MESSAGE> = { messages: [], entries: [], nextCursor: page.nextCursor, invalid: [] };
  if (stored.length === 0) return result;
  const all = await validateChatMessages<UI_MESSAGE>(
    stored.map((row) => toUIMessage(row)),
    schemas,
    'history',
  ).catch(() => undefined);
  const validated = all ?? (await Promise.all(stored.map((row) => validateOne(row, schemas, result))));
  stored.forEach((row, index) => {
    const message = validated[index];
    if (!message) return;
    result.messages.push(message);
    result.entries.push({
      id: row.message.id,
      sequence: row.sequence,
      status: row.status,
      contextState: row.contextState,
      exclusionReason: row.exclusionReason,
      createdAt: row.createdAt,
    });
  });
  return result;
}

async function validateOne<UI_MESSAGE extends UIMessage>(
  row: ChatWindowMessage,
  schemas: ChatSchemas<UI_MESSAGE>,
  page: UIMessagePage<UI_MESSAGE>,
) {
  try {
    const [message] = await validateChatMessages<UI_MESSAGE>([toUIMessage(row)], schemas, 'history');
    return message;
  } catch (error) {
    page.invalid.push({ id: row.message.id, sequence: row.sequence, error: (error as Error).message });
    return undefined;
  }
}
