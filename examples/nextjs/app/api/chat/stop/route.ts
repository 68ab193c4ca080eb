import { chat } from '../../../../lib/chat';

export const dynamic = 'force-dynamic';

/** Stops the thread's answer and keeps what was streamed (`{ threadId }`). */
export const POST = chat.stop;
