import { NextResponse, type NextRequest } from 'next/server';

/**
 * A page cannot answer 503 itself: once it renders, a thrown error is Next.js's 500 page. So before the pages that
 * read the store, the proxy asks the readiness route (app/api/health/route.ts) and passes its 503 on, with the same
 * JSON as the API routes: database down, not migrated, or the login lacking a grant. Over HTTP, not by importing
 * the store: Next.js may run the proxy apart from the app, and shares no module state with it.
 */
export async function proxy(request: NextRequest) {
  const health = await fetch(new URL('/api/health', request.url), { cache: 'no-store' }).catch(() => undefined);
  if (health?.status === 503)
    return Response.json(await health.json(), {
      status: 503,
      headers: { 'retry-after': health.headers.get('retry-after') ?? '5' },
    });
  return NextResponse.next();
}

export const config = {
  // The pages (the chat's own requests go to /api/*, which answer 503 themselves); not Next.js's assets or the icon.
  matcher: ['/', '/t/:path*'],
};
