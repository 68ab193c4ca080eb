import { chat } from '../../../../../lib/chat';

export const dynamic = 'force-dynamic';

/**
 * `useChat({ resume: true })` asks here on mount (`GET /api/chat/<id>/stream`): the answer in progress replayed from
 * its start and followed to its end, or 204 when nothing is streaming.
 */
export const GET = chat.GET;
