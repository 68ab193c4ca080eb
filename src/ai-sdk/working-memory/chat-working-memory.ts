import type { TenantHistory } from '../../store/tenant-history.js';
import type { WorkingMemoryStore } from '../../model/context-store.js';
import {
  createUpdateWorkingMemoryTool,
  type CreateUpdateWorkingMemoryToolOptions,
} from './create-update-working-memory-tool.js';

/** The working memory of a chat route's turns: whose it is, and how its tool checks what the model writes. */
export interface ChatWorkingMemorySettings<DOCUMENT = unknown> extends Omit<
  CreateUpdateWorkingMemoryToolOptions<DOCUMENT>,
  'store'
> {
  /**
   * The working memory of the turn's user (or thread), made per turn from the tenant's store and the thread: the
   * route builds the `updateWorkingMemory` tool on it and hands it to the model source as `memoryTools`.
   */
  store: (input: { history: TenantHistory; threadId: string }) => WorkingMemoryStore | PromiseLike<WorkingMemoryStore>;
}

/** The tools a chat route builds per turn for memory across threads, for the agent or `streamText` call to offer. */
export interface ChatMemoryTools {
  /** The `updateWorkingMemory` tool ({@link createUpdateWorkingMemoryTool}), bound to the turn's working memory. */
  updateWorkingMemory: ReturnType<typeof createUpdateWorkingMemoryTool>;
}

/** The turn's memory tools, or undefined without working-memory settings. */
export async function chatMemoryTools(
  settings: ChatWorkingMemorySettings | undefined,
  input: { history: TenantHistory; threadId: string },
): Promise<ChatMemoryTools | undefined> {
  if (!settings) return undefined;
  const { store, ...tool } = settings;
  return { updateWorkingMemory: createUpdateWorkingMemoryTool({ ...tool, store: await store(input) }) };
}
