// The cache keyed a row's entry by a string of all its fields; it now keys it by the content version and compares
// the other fields one by one (91737de). Values a string made alike (null and absent, -0 and 0, a number and its
// text, [] and no list, an invalid date) may now miss, which costs a conversion; but the field comparison must never
// hand back an entry for a row the string kept apart. Drawn from such values, row pairs are looked up after each
// other: a hit must be a hit of the string key too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContextMessage } from '../../../src/model/context-store.js';
import { cachedRow } from '../../../src/context/caches/cached-row.js';
import { createContextMessageCache } from '../../../src/tokens/context-message-cache.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 800);

const odd = [null, undefined, '', 0, -0, 1, '1', '0', Number.NaN, 'NaN', 'null', 'undefined'] as const;
const value = fc.constantFrom<unknown>(...odd);
const counts = fc.oneof(
  fc.constantFrom<unknown>(null, undefined, [], '', '1,2'),
  fc.array(fc.constantFrom<unknown>(0, -0, 1, 2, '1', '2', Number.NaN, null, undefined), { maxLength: 3 }),
);
const created = fc.constantFrom<unknown>(undefined, null, 0, new Date(0), new Date(Number.NaN), new Date(-0), '');
const row = fc.record({
  createdAt: created,
  status: fc.constantFrom<unknown>('completed', 'streaming', ...odd),
  schemaVersion: value,
  role: fc.constantFrom<unknown>('user', ...odd),
  id: fc.constantFrom<unknown>('m1', ...odd),
  tokenCount: value,
  tokenCounterId: value,
  partTokenCounts: counts,
});
type Fields = typeof row extends fc.Arbitrary<infer T> ? T : never;

function storedOf(fields: Fields): ContextMessage {
  return {
    rowId: '00000000-0000-4000-8000-000000000001',
    sequence: 1,
    contentVersion: 1,
    createdAt: fields.createdAt instanceof Date ? new Date(fields.createdAt.getTime()) : fields.createdAt,
    status: fields.status,
    schemaVersion: fields.schemaVersion,
    message: { id: fields.id, role: fields.role, parts: [{ type: 'text', text: 'hello' }] },
    contextState: 'eligible',
    pinned: false,
    tokenCount: fields.tokenCount,
    tokenCounterId: fields.tokenCounterId,
    partTokenCounts: Array.isArray(fields.partTokenCounts) ? [...fields.partTokenCounts] : fields.partTokenCounts,
    deletedAt: null,
  } as ContextMessage;
}

// The key before 91737de: what the cache held an entry under.
function stringKey(stored: ContextMessage): string {
  const created = stored.createdAt instanceof Date ? stored.createdAt.getTime() : '';
  const parts = Array.isArray(stored.partTokenCounts) ? stored.partTokenCounts.join(',') : '';
  const counts = `${stored.tokenCount ?? ''}\u0000${stored.tokenCounterId ?? ''}\u0000${parts}`;
  return `${stored.contentVersion}\u0000${created}\u0000${String(stored.status)}\u0000${String(stored.schemaVersion ?? '')}\u0000${String(stored.message.role)}\u0000${String(stored.message.id)}\u0000${counts}`;
}

describe('a cached row compared field by field', () => {
  it('should never hand back an entry for a row the string key kept apart', () => {
    fc.assert(
      fc.property(row, row, (a, b) => {
        const cache = createContextMessageCache().scoped('tenant\u0000thread');
        const first = storedOf(a);
        const entry = cachedRow(first, cache, true);
        const second = storedOf(b);
        if (cachedRow(second, cache, false) === entry && entry !== undefined)
          expect(stringKey(second)).toBe(stringKey(first));
        // Nothing changed: a fresh copy finds it (unless a field never equals itself, NaN).
        const copy = storedOf(a);
        if (stringKey(copy) === stringKey(first) && !hasNaN(a)) expect(cachedRow(copy, cache, false)).toBe(entry);
      }),
      { numRuns: RUNS },
    );
  });
});

function hasNaN(fields: Fields): boolean {
  return [fields.tokenCount, fields.status, fields.schemaVersion, fields.role, fields.id, fields.tokenCounterId].some(
    (item) => typeof item === 'number' && Number.isNaN(item),
  );
}
