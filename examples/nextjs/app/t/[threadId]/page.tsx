import { NotFoundError } from 'agent-history';
import { loadThreadPage } from 'agent-history/ai-sdk';
import { notFound } from 'next/navigation';
import { ChatApp } from '../../components/chat-app';
import { PAGE_SIZE } from '../../../lib/chat';
import { currentUserId, isOtherUsersThread, tenantHistory } from '../../../lib/tenant';
import { metadataSchema, tools, type ChatMessage } from '../../../lib/tools';

export const dynamic = 'force-dynamic';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export default async function ThreadPage({ params }: { params: Promise<{ threadId: string }> }) {
  const { threadId } = await params;
  const history = await tenantHistory();
  try {
    const [page, threads] = await Promise.all([
      loadThreadPage<ChatMessage>({ history, threadId, limit: PAGE_SIZE, tools, metadataSchema }).catch(
        async (error) => {
          // A new chat: the browser made its uuid, and its first message will create the thread. Another user's
          // thread is not a new chat: 404.
          if (
            error instanceof NotFoundError &&
            UUID.test(threadId) &&
            !(await isOtherUsersThread(threadId, await currentUserId()))
          )
            return { messages: [], entries: [], nextCursor: null };
          throw error;
        },
      ),
      history.listThreads({ limit: 50 }),
    ]);
    return (
      <ChatApp
        key={threadId}
        threadId={threadId}
        initialMessages={page.messages}
        initialStatuses={Object.fromEntries(page.entries.map((entry) => [entry.id, entry.status]))}
        initialCursor={page.nextCursor}
        threads={threads.threads.map((thread) => ({
          id: thread.id,
          title: thread.title ?? 'Untitled',
          messageCount: thread.messageCount,
        }))}
      />
    );
  } catch (error) {
    if (error instanceof NotFoundError || (error as { code?: string }).code === 'thread-not-found') notFound();
    throw error;
  }
}
