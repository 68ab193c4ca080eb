// A cached row's entry is valid for one version of the row: its content version (the key) and every other field it
// was made from (when it was written, status, schema version, role, message id and stored counts). Each field is
// changed alone on a fresh copy of the row, as a later load parses it: the entry must not be handed back for it,
// and a fresh copy with nothing changed must get the same entry.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContextMessage } from '../../../src/model/context-store.js';
import { cachedRow } from '../../../src/context/caches/cached-row.js';
import { createContextMessageCache } from '../../../src/tokens/context-message-cache.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

const row = fc.record({
  contentVersion: fc.integer({ min: 1, max: 5 }),
  createdAt: fc.option(fc.integer({ min: 0, max: 2_000_000_000_000 }), { nil: undefined }),
  status: fc.constantFrom('completed', 'aborted', 'streaming'),
  schemaVersion: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  role: fc.constantFrom('user', 'assistant'),
  id: fc.constantFrom('m1', 'm2'),
  tokenCount: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }),
  tokenCounterId: fc.option(fc.constantFrom('o200k', 'other'), { nil: null }),
  partTokenCounts: fc.option(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 4 }), { nil: null }),
});

type Fields = typeof row extends fc.Arbitrary<infer T> ? T : never;

function storedOf(fields: Fields): ContextMessage {
  return {
    rowId: '00000000-0000-4000-8000-000000000001',
    sequence: 1,
    contentVersion: fields.contentVersion,
    ...(fields.createdAt === undefined ? {} : { createdAt: new Date(fields.createdAt) }),
    status: fields.status,
    ...(fields.schemaVersion === undefined ? {} : { schemaVersion: fields.schemaVersion }),
    message: { id: fields.id, role: fields.role, parts: [{ type: 'text', text: 'hello' }] },
    contextState: 'eligible',
    pinned: false,
    tokenCount: fields.tokenCount,
    tokenCounterId: fields.tokenCounterId,
    partTokenCounts: fields.partTokenCounts === null ? null : [...fields.partTokenCounts],
    deletedAt: null,
  } as ContextMessage;
}

describe('cachedRow', () => {
  it('should hand an entry back for a fresh copy of its row, and never for a row that differs in one field', () => {
    fc.assert(
      fc.property(row, row, (a, b) => {
        for (const key of Object.keys(a) as Array<keyof Fields>) {
          if (JSON.stringify(a[key]) === JSON.stringify(b[key])) continue;
          const cache = createContextMessageCache().scoped('tenant\u0000thread');
          const entry = cachedRow(storedOf(a), cache, true)!;
          expect(cachedRow(storedOf(a), cache, false)).toBe(entry);
          const other = { ...a, [key]: b[key] } as Fields;
          expect(cachedRow(storedOf(other), cache, false)).toBeUndefined();
          // Made for the other version, the entry replaces the first one.
          const replaced = cachedRow(storedOf(other), cache, true)!;
          expect(replaced).not.toBe(entry);
          expect(cachedRow(storedOf(a), cache, false)).toBeUndefined();
          expect(cachedRow(storedOf(other), cache, false)).toBe(replaced);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('should keep the per-part counts it was made for when the row’s array changes afterwards', () => {
    const cache = createContextMessageCache().scoped('tenant\u0000thread');
    const fields = { ...fc.sample(row, 1)[0]!, partTokenCounts: [3, 4] };
    const first = storedOf(fields);
    const entry = cachedRow(first, cache, true)!;
    (first.partTokenCounts as number[])[1] = 5;
    expect(cachedRow(storedOf(fields), cache, false)).toBe(entry);
    expect(cachedRow(storedOf({ ...fields, partTokenCounts: [3, 5] }), cache, false)).toBeUndefined();
  });
});
