import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/errors/invalid-message-error.js';
import { assertStorableJson } from '../../src/store/validate-message.js';

// assertStorableJson builds a value's path only when it needs one (a failing value, a container, a value past the
// depth limit). Its verdict and the error it names must be those of the walk that built every path: that walk is
// the oracle here, run on generated values with NUL, lone surrogates, non-finite numbers, functions, dates, bad
// keys, and nesting around the 64-level limit.
function reference(value: unknown, path: string, depth = 0): void {
  if (depth > 64) throw new InvalidMessageError({ path, value: '…', message: 'nested deeper than 64 levels.' });
  const storable = (text: string, at: string) => {
    if (text.includes('\u0000'))
      throw new InvalidMessageError({ path: at, value: text, message: 'contains a NUL character.' });
    if (!text.isWellFormed())
      throw new InvalidMessageError({ path: at, value: text, message: 'contains a lone UTF-16 surrogate.' });
  };
  switch (typeof value) {
    case 'string':
      return storable(value, path);
    case 'number':
      if (!Number.isFinite(value))
        throw new InvalidMessageError({ path, value: String(value), message: 'not a finite number.' });
      return;
    case 'boolean':
    case 'undefined':
      return;
    case 'object':
      if (value === null) return;
      if (Array.isArray(value)) return value.forEach((item, index) => reference(item, `${path}[${index}]`, depth + 1));
      if (value instanceof Date) return;
      for (const [key, item] of Object.entries(value)) {
        storable(key, `${path} key`);
        reference(item, `${path}.${key}`, depth + 1);
      }
      return;
    default:
      throw new InvalidMessageError({ path, value: typeof value, message: 'not a JSON value.' });
  }
}

const outcome = (check: () => void) => {
  try {
    check();
    return 'ok';
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message}`;
  }
};

const text = fc.oneof(fc.string(), fc.constantFrom('a\u0000b', '\uD800', 'x\uDC00', 'ok', ''));
const leaf = fc.oneof(
  text,
  fc.double(),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, true, null, undefined, new Date(0), () => 1, 10n),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
}));
/** A value wrapped in `levels` arrays or objects: its leaves land around the depth limit. */
const deep = fc.tuple(value, fc.integer({ min: 60, max: 68 }), fc.boolean()).map(([inner, levels, arrays]) => {
  let wrapped: unknown = inner;
  for (let level = 0; level < levels; level++) wrapped = arrays ? [wrapped] : { k: wrapped };
  return wrapped;
});

describe('assertStorableJson', () => {
  it('should give the verdict and name the value the full-path walk does, for any value', () => {
    fc.assert(
      fc.property(fc.oneof(value, deep), (generated) => {
        expect(outcome(() => assertStorableJson(generated, 'parts'))).toBe(
          outcome(() => reference(generated, 'parts')),
        );
      }),
      { numRuns: 3_000 },
    );
  });
});
