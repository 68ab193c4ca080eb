/**
 * Replaces every occurrence of the spans in every scalar and every key of a JSON value. A string is scrubbed in
 * place; a number, boolean or null is matched in its JSON text (`4111111111111111`, `true`, `null`) and, when a span
 * occurs in it, becomes the scrubbed text as a string (a number cannot hold the replacement). Keys are scrubbed too
 * (a secret can be a key); two keys that scrub to the same text are both kept, the later one with a `#2` suffix
 * (then `#3`, …), so no value is lost to a collision.
 */
export function replaceSpans<VALUE>(value: VALUE, spans: readonly string[], replacement: string): VALUE {
  const scrub = (text: string) => spans.reduce((result, span) => result.split(span).join(replacement), text);
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return scrub(item);
    if (typeof item === 'number' || typeof item === 'boolean' || item === null) {
      const source = JSON.stringify(item);
      const scrubbed = scrub(source);
      return scrubbed === source ? item : scrubbed;
    }
    if (Array.isArray(item)) return item.map(walk);
    if (item && typeof item === 'object') {
      const entries: Array<[string, unknown]> = [];
      const taken = new Set<string>();
      for (const [key, inner] of Object.entries(item)) {
        let scrubbed = scrub(key);
        for (let suffix = 2; taken.has(scrubbed); suffix++) scrubbed = `${scrub(key)}#${suffix}`;
        taken.add(scrubbed);
        entries.push([scrubbed, walk(inner)]);
      }
      return Object.fromEntries(entries);
    }
    return item;
  };
  return walk(value) as VALUE;
}
