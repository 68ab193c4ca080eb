/** Replaces every occurrence of the spans in every string (keys included) of a JSON value. */
export function replaceSpans<VALUE>(value: VALUE, spans: readonly string[], replacement: string): VALUE {
  const scrub = (text: string) => spans.reduce((result, span) => result.split(span).join(replacement), text);
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return scrub(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item && typeof item === 'object')
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [scrub(key), walk(inner)]));
    return item;
  };
  return walk(value) as VALUE;
}
