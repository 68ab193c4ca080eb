import type { ModelMessage } from 'ai';
import type { ContextMeasure } from '../../tokens/context-measure.js';
import type { TokenTally } from '../../tokens/count-message-tokens.js';
import type { ContextRecalledItem } from '../../model/context-store.js';

/** One item recalled from another thread of the same user, as one `user` message after the working memory. */
export interface RecalledSegment {
  /** The segment's tag. */
  kind: 'recalled';
  /** The item it renders. */
  item: ContextRecalledItem;
  /** Its one `user` message. */
  messages: ModelMessage[];
  /** Its raw token tally. */
  tokens: TokenTally;
}

/** The text of a recalled item's message: a header saying where it comes from, then the text. */
export function renderRecalledText({ role, text }: Pick<ContextRecalledItem, 'role' | 'text'>): string {
  const who = role === 'user' ? 'The user' : 'You';
  return `[Recalled from an earlier conversation with this user. ${who} wrote:]\n\n${text}`;
}

/** A recalled item as a segment, counted with the engine's measure. Deterministic, so a rebuild renders the same. */
export function createRecalledSegment({
  item,
  measure,
}: {
  item: ContextRecalledItem;
  measure: ContextMeasure;
}): RecalledSegment {
  const message: ModelMessage = { role: 'user', content: [{ type: 'text', text: renderRecalledText(item) }] };
  return { kind: 'recalled', item: { ...item }, messages: [message], tokens: measure.countMessage(message) };
}
