/** The text parts of a message, joined by spaces. */
export function messageText(message: { parts: ReadonlyArray<{ type: string; text?: unknown }> }): string {
  return message.parts
    .flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
    .join(' ')
    .trim();
}
