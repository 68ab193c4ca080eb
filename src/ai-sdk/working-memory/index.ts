export {
  createUpdateWorkingMemoryTool,
  type CreateUpdateWorkingMemoryToolOptions,
  type UpdateWorkingMemoryResult,
} from './create-update-working-memory-tool.js';
export type { UpdateWorkingMemoryInput } from './working-memory-input-schema.js';
export type { ChatMemoryTools, ChatWorkingMemorySettings } from './chat-working-memory.js';
