import { redirect } from 'next/navigation';
import { tenantHistory } from '../lib/tenant';

export const dynamic = 'force-dynamic';

/** Opens the most recent thread, or a new chat. */
export default async function Home() {
  const history = await tenantHistory();
  const { threads } = await history.listThreads({ limit: 1 });
  // No thread yet: a new chat's uuid; its first message creates the thread (createThreads: 'on-first-message').
  redirect(`/t/${threads[0]?.id ?? crypto.randomUUID()}`);
}
