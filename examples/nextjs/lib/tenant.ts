import { NotFoundError } from 'agent-history';
import { cookies } from 'next/headers';
import { getAgentHistory } from './database';

/**
 * The example's sign-in is a cookie naming one of two demo users of one demo tenant (`/api/session?user=…` sets
 * it). A real app takes both from its session here, and nowhere else.
 */
export const DEMO_TENANT_ID = process.env.DEMO_TENANT_ID ?? '00000000-0000-4000-8000-000000000001';
export const DEMO_USERS = ['demo-user', 'demo-user-2'] as const;
export const DEMO_USER_COOKIE = 'demo-user';

/** The signed-in demo user: the cookie's, when it names one, else the first. */
export async function currentUserId(): Promise<string> {
  const value = (await cookies()).get(DEMO_USER_COOKIE)?.value;
  return DEMO_USERS.find((user) => user === value) ?? DEMO_USERS[0];
}

/**
 * The store of the request's tenant, scoped to the signed-in user by row-level security: every query sees and
 * writes only that user's threads, so another user's thread is "not found" wherever its id is used.
 */
export async function tenantHistory() {
  return (await getAgentHistory()).forTenant(DEMO_TENANT_ID, { userId: await currentUserId() });
}

/**
 * Whether `threadId` is a thread of another user of the tenant. Read tenant-wide, for one purpose: to answer 404
 * instead of opening a new, empty chat under an id that is taken.
 */
export async function isOtherUsersThread(threadId: string, userId: string): Promise<boolean> {
  const tenantWide = (await getAgentHistory()).forTenant(DEMO_TENANT_ID);
  const thread = await tenantWide.getThread(threadId).catch((error: unknown) => {
    if (error instanceof NotFoundError) return null;
    throw error;
  });
  return thread !== null && thread.userId !== userId;
}
