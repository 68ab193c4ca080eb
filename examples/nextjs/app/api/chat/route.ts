import { chat } from '../../../lib/chat';

export const dynamic = 'force-dynamic';

/** Submit, edit or regenerate: answers with a UI message stream, persisted as it goes. */
export const POST = chat.POST;
