import { DEMO_USER_COOKIE, DEMO_USERS } from '../../../lib/tenant';

export const dynamic = 'force-dynamic';

/** The demo's sign-in: `?user=demo-user-2` signs in as that demo user and opens their latest chat. */
export async function GET(request: Request) {
  const url = new URL(request.url);
  const user = DEMO_USERS.find((candidate) => candidate === url.searchParams.get('user'));
  if (user === undefined) return Response.json({ error: { code: 'unknown-user', users: DEMO_USERS } }, { status: 400 });
  return new Response(null, {
    status: 303,
    headers: { location: '/', 'set-cookie': `${DEMO_USER_COOKIE}=${user}; Path=/; HttpOnly; SameSite=Lax` },
  });
}
