/**
 * The options named by `keys`, copied from `options` into a new object (a missing one as `undefined`, which the
 * receiver takes as its default): how a group of options declared once is handed on as a group.
 */
export function pickOptions<OPTIONS extends object, KEY extends keyof OPTIONS>(
  options: OPTIONS,
  keys: readonly KEY[],
): Pick<OPTIONS, KEY> {
  const picked = {} as Pick<OPTIONS, KEY>;
  for (const key of keys) picked[key] = options[key];
  return picked;
}
