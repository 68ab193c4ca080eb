// The context message cache: one entry per row and scope, for one version, bounded by bytes (least recently used
// out first). A model of it (a plain array in use order) is run against it over random operations.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { createContextMessageCache } from '../../src/tokens/context-message-cache.js';

type Operation =
  | { kind: 'get'; scope: number; id: number; version: number }
  | { kind: 'set'; scope: number; id: number; version: number; bytes: number }
  | { kind: 'delete' | 'withdraw'; scope: number; id: number }
  | { kind: 'clear' };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('get' as const), scope: fc.nat(2), id: fc.nat(5), version: fc.nat(2) }),
  fc.record({
    kind: fc.constant('set' as const),
    scope: fc.nat(2),
    id: fc.nat(5),
    version: fc.nat(2),
    bytes: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.constantFrom(0, -5, Number.NaN, 0.5, 150)),
  }),
  fc.record({ kind: fc.constantFrom('delete' as const, 'withdraw' as const), scope: fc.nat(2), id: fc.nat(5) }),
  fc.constant({ kind: 'clear' as const }),
);

describe('createContextMessageCache', () => {
  it('should behave as a least-recently-used list bounded by bytes, one version per row and scope', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 120 }), (operations) => {
        const maxBytes = 100;
        const cache = createContextMessageCache({ maxBytes });
        const scopes = ['a', 'b', 'a\u0000b'].map((scope) => cache.scoped(scope));
        // The model: entries from least to most recently used.
        let model: Array<{ scope: number; id: number; version: number; value: object; bytes: number }> = [];
        // Rows withdrawn (until a clear): never stored again, so a request that read one before cannot put it back.
        // A delete only drops the entry.
        const dropped = new Set<string>();
        for (const step of operations) {
          const scoped = step.kind === 'clear' ? undefined : scopes[step.scope]!;
          if (step.kind === 'get' && scoped) {
            const at = model.findIndex((entry) => entry.scope === step.scope && entry.id === step.id);
            const hit = at >= 0 && model[at]!.version === step.version ? model[at]! : undefined;
            expect(scoped.get(String(step.id), String(step.version))).toBe(hit?.value);
            if (hit) model = [...model.filter((entry) => entry !== hit), hit];
          } else if (step.kind === 'set' && scoped) {
            const value = { step };
            scoped.set(String(step.id), String(step.version), value, step.bytes);
            model = model.filter((entry) => !(entry.scope === step.scope && entry.id === step.id));
            const bytes = Number.isFinite(step.bytes) && step.bytes > 0 ? Math.ceil(step.bytes) : 1;
            if (bytes <= maxBytes && !dropped.has(`${step.scope}:${step.id}`))
              model.push({ scope: step.scope, id: step.id, version: step.version, value, bytes });
            while (model.reduce((sum, entry) => sum + entry.bytes, 0) > maxBytes) model.shift();
          } else if ((step.kind === 'delete' || step.kind === 'withdraw') && scoped) {
            scoped[step.kind](String(step.id));
            if (step.kind === 'withdraw') dropped.add(`${step.scope}:${step.id}`);
            model = model.filter((entry) => !(entry.scope === step.scope && entry.id === step.id));
          } else {
            cache.clear();
            dropped.clear();
            model = [];
          }
          expect(cache.size).toBe(model.length);
          expect(cache.bytes).toBe(model.reduce((sum, entry) => sum + entry.bytes, 0));
          expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
        }
        // Every entry the model holds is found, in its own scope only.
        for (const entry of model) {
          expect(scopes[entry.scope]!.get(String(entry.id), String(entry.version))).toBe(entry.value);
          for (const [index, other] of scopes.entries())
            if (index !== entry.scope && !model.some((held) => held.scope === index && held.id === entry.id))
              expect(other.get(String(entry.id), String(entry.version))).toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('should keep no empty part for a thread whose entries all went', () => {
    const cache = createContextMessageCache({ maxBytes: 10 });
    for (let thread = 0; thread < 1000; thread++) cache.scoped(`thread-${thread}`).set('row', '1', {}, 10);
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(10);
    // The first thread's part was dropped with its entry, and is made again when it fills.
    const first = cache.scoped('thread-0');
    expect(first.get('row', '1')).toBeUndefined();
    first.set('row', '2', { again: true }, 5);
    expect(first.get('row', '2')).toEqual({ again: true });
  });

  it('should refuse a bound that is not a non-negative integer, naming it', () => {
    for (const maxBytes of [-1, 1.5, Number.NaN, '64' as unknown as number])
      expect(() => createContextMessageCache({ maxBytes })).toThrow(InvalidArgumentError);
    expect(() => createContextMessageCache({ maxBytes: -1 })).toThrow(/maxBytes/);
  });

  it('should refuse a withdrawn row until 4,096 other rows were withdrawn after it, and a deleted one never', () => {
    const cache = createContextMessageCache();
    const part = cache.scoped('t');
    part.delete('d0');
    part.set('d0', 'v1', {}, 10);
    expect(part.get('d0', 'v1')).toBeDefined();
    part.withdraw('r0');
    part.set('r0', 'v1', {}, 10);
    expect(part.get('r0', 'v1')).toBeUndefined();
    cache.scoped('other').set('r0', 'v1', {}, 10);
    expect(cache.size).toBe(2);
    for (let index = 1; index <= 4096; index++) part.withdraw(`r${index}`);
    part.set('r0', 'v1', {}, 10);
    expect(part.get('r0', 'v1')).toBeDefined();
  });
});
