import type { TenantHistory } from '../../store/tenant-history.js';
import { generateThreadTitle, type ChatTitleGenerator, type ThreadTitleInput } from './generate-thread-title.js';

/**
 * Writes the title of an untitled thread after its first exchange, recording the messages it was written from
 * (`derivedFrom`), so that a redaction of either clears it. A thread given a title meanwhile (by the user, or by a
 * racing request) keeps it. Returns the title written, or null.
 */
export async function titleThread(
  history: TenantHistory,
  threadId: string,
  generator: ChatTitleGenerator,
  input: ThreadTitleInput,
  derivedFrom: string[],
): Promise<string | null> {
  const title = await generateThreadTitle(generator, input);
  if (title === null) return null;
  const thread = await history.getThread(threadId);
  if (thread.title !== null) return null;
  await history.renameThread(threadId, { title, derivedFrom });
  return title;
}
