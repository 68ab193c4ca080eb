import { redirect } from 'next/navigation';
import { DEMO_USER_ID, tenantHistory } from '../lib/tenant';

export const dynamic = 'force-dynamic';

/** Opens the most recent thread, or a new one. */
export default async function Home() {
  const history = await tenantHistory();
  const { threads } = await history.listThreads({ userId: DEMO_USER_ID, limit: 1 });
  const thread = threads[0] ?? (await history.createThread({ userId: DEMO_USER_ID, title: 'New chat' }));
  redirect(`/t/${thread.id}`);
}
