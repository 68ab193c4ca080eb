import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { TokenTally } from '../../tokens/count-message-tokens.js';
import type { ContextWorkingMemory } from '../../model/context-store.js';

/**
 * The working memory the store keeps across threads (`ContextStore.loadMemory`), as one `user` message placed first,
 * after the instructions.
 */
export interface WorkingMemorySegment {
  /** The segment's tag. */
  kind: 'working-memory';
  /** The document it renders (id, scope, version and content). */
  workingMemory: ContextWorkingMemory;
  /** Its one `user` message. */
  messages: ModelMessage[];
  /** Its raw token tally. */
  tokens: TokenTally;
}

/** The text of the working-memory message: a header with the version the `updateWorkingMemory` tool expects, then the document. */
export function renderWorkingMemoryText({ scope, version, content }: ContextWorkingMemory): string {
  const about = scope === 'user' ? 'the user, kept across conversations' : 'this conversation';
  return `[Working memory about ${about} (version ${version}). To change it, pass expectedVersion ${version}.]\n\n${content}`;
}

/** The working memory as a segment, counted with the engine's measure. Deterministic, so a rebuild renders the same. */
export function createWorkingMemorySegment({
  workingMemory,
  measure,
}: {
  workingMemory: ContextWorkingMemory;
  measure: ContextMeasure;
}): WorkingMemorySegment {
  const message: ModelMessage = {
    role: 'user',
    content: [{ type: 'text', text: renderWorkingMemoryText(workingMemory) }],
  };
  const { id, scope, version, content } = workingMemory;
  return {
    kind: 'working-memory',
    workingMemory: { id, scope, version, content },
    messages: [message],
    tokens: measure.countMessage(message),
  };
}
