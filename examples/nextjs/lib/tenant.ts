import { getAgentHistory } from './database';

/**
 * The example has no sign-in: every request belongs to one demo tenant and user. A real app takes both from
 * its session here, and nowhere else (the store scopes every query to the tenant it is given).
 */
export const DEMO_TENANT_ID = process.env.DEMO_TENANT_ID ?? '00000000-0000-4000-8000-000000000001';
export const DEMO_USER_ID = 'demo-user';

/** The store of the request's tenant. */
export async function tenantHistory() {
  return (await getAgentHistory()).forTenant(DEMO_TENANT_ID);
}
