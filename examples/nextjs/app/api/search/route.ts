import type { SearchHit } from 'agent-history';
import { tenantHistory } from '../../../lib/tenant';
import { readAsUser, turnIndex, userMessagesOf } from '../../../lib/turns';
import { errorResponse } from '../../../lib/errors';

export const dynamic = 'force-dynamic';

/**
 * Full-text search over the user's messages (`?q=`), one hit per turn: a question and its answers (the assistant
 * quoting it, a regenerated answer) are one note, shown once as the turn's best-ranked message (the question when
 * they rank the same). Hits come best first; `turn` is the turn's stable number in its thread (lib/turns.ts).
 */
export async function GET(request: Request) {
  try {
    const query = (new URL(request.url).searchParams.get('q') ?? '').trim();
    if (query.length === 0) return Response.json({ hits: [] });
    const found = await (await tenantHistory()).searchMessages(query, { limit: 100 });
    return Response.json({ hits: (await oncePerTurn(found)).slice(0, 20) });
  } catch (error) {
    return errorResponse(error);
  }
}

async function oncePerTurn(hits: SearchHit[]): Promise<Array<SearchHit & { turn: number }>> {
  const threadIds = [...new Set(hits.map((hit) => hit.threadId))];
  const users = await readAsUser((tx) => userMessagesOf(tx, threadIds));
  const turnOf = new Map(
    threadIds.map((threadId) => [
      threadId,
      turnIndex(users.filter((user) => user.threadId === threadId).map((user) => user.sequence)),
    ]),
  );
  const best = new Map<string, SearchHit & { turn: number }>();
  for (const hit of hits) {
    const turn = turnOf.get(hit.threadId)!(hit.sequence);
    const key = `${hit.threadId}/${turn}`;
    const kept = best.get(key);
    const better = !kept || hit.rank > kept.rank || (hit.rank === kept.rank && hit.role === 'user');
    if (better) best.set(key, { ...hit, turn });
  }
  // Map order is first-insertion order: the turns come in the order of their first (best) hit.
  return [...best.values()];
}
