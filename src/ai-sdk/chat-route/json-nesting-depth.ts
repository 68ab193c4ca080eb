import { InvalidArgumentError } from '../../errors/invalid-argument-error.js';

/**
 * The deepest nesting a chat request body may have: the store refuses a message nested deeper than 64 levels, and the
 * body wraps its messages in a few levels of its own.
 */
export const MAX_BODY_DEPTH = 80;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * How deeply arrays and objects nest in the JSON text `text`, counted up to `limit + 1` (the scan stops there), in one
 * pass over its characters with no parsing: brackets inside strings do not count. For a text that is not JSON the
 * figure is the one of its brackets, which is all a caller needs before `JSON.parse` refuses it.
 */
export function jsonNestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
  }
  return deepest;
}

/**
 * Refuses a body nested deeper than {@link MAX_BODY_DEPTH} before it is parsed: `JSON.parse` of a few megabytes
 * nested millions deep holds the event loop for seconds, and the route parses the body before it knows who asks.
 */
export function assertBodyDepth(text: string): void {
  const depth = jsonNestingDepth(text, MAX_BODY_DEPTH);
  if (depth > MAX_BODY_DEPTH)
    throw new InvalidArgumentError({
      argument: 'body',
      value: '…',
      message: `nested deeper than ${MAX_BODY_DEPTH} levels.`,
    });
}
