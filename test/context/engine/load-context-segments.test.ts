// The store's view lists the pinned rows before the boundary and the tail after it; a store may list a row in both
// (pinned after the boundary), or a row twice. The load takes one row per sequence, the tail's, in sequence order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextEmptyError, defaultContextPolicy } from '../../../src/context/index.js';
import type { ContextMessage } from '../../../src/model/context-store.js';
import { loadContextSegments } from '../../../src/context/engine/load-context-segments.js';
import { smallMeasure, stored, user } from '../fixtures.js';

const measure = smallMeasure(100_000);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

const row = fc.record({
  sequence: fc.integer({ min: 1, max: 8 }),
  pinned: fc.boolean(),
  deleted: fc.boolean(),
  label: fc.constantFrom('a', 'b', 'c'),
});

type Row = typeof row extends fc.Arbitrary<infer T> ? T : never;

function rowOf({ sequence, pinned, deleted, label }: Row): ContextMessage {
  return stored(sequence, user(`m${sequence}`, `message ${sequence} ${label}`), {
    pinned,
    deletedAt: deleted ? new Date(0) : null,
  });
}

// The rule, as a map from sequence to row (the tail set after the pinned ones).
function expected(pinned: ContextMessage[], tail: ContextMessage[]) {
  const bySequence = new Map<number, ContextMessage>();
  for (const message of [...pinned, ...tail]) bySequence.set(message.sequence, message);
  return [...bySequence.values()].sort((a, b) => a.sequence - b.sequence);
}

describe('loadContextSegments', () => {
  it('should take one row per sequence, the tail’s over a pinned one, in order; and count them when none is left', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 6 }), fc.array(row, { maxLength: 8 }), (pinnedValues, tailValues) => {
        const pinned = pinnedValues.map(rowOf);
        const tail = tailValues.map(rowOf);
        const rows = expected(pinned, tail);
        const visible = rows.filter((message) => message.deletedAt === null);
        const view = { snapshot: null, latestSummary: null, currentVersion: 0, pinned, tail };
        const load = () => loadContextSegments({ view, measure, policy: defaultContextPolicy });
        if (visible.length === 0) {
          expect(load).toThrow(ContextEmptyError);
          try {
            load();
          } catch (error) {
            expect((error as ContextEmptyError).loadedMessages).toBe(rows.length);
          }
          return;
        }
        const { segments } = load();
        expect(segments.map((segment) => (segment.kind === 'message' ? segment.sequence : null))).toEqual(
          visible.map((message) => message.sequence),
        );
        expect(JSON.stringify(segments.map((segment) => segment.messages))).toBe(
          JSON.stringify(
            visible.map((message) => [
              {
                role: 'user',
                content: [{ type: 'text', text: (message.message.parts[0] as unknown as { text: string }).text }],
              },
            ]),
          ),
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('should take a garbage sequence (NaN) listed in both lists once, as a map of the rows does', () => {
    const row = (sequence: number, label: string, pinned = false) =>
      stored(sequence, user(`m${label}`, `message ${label}`), { pinned });
    // Sorted, the two NaN rows are not next to each other (NaN compares with nothing).
    const view = (tail: ContextMessage[]) => ({
      snapshot: null,
      latestSummary: null,
      currentVersion: 0,
      pinned: [row(Number.NaN, 'pinned', true)],
      tail,
    });
    const { stages } = loadContextSegments({
      view: view([row(1, 'a'), row(Number.NaN, 'tail', true), row(2, 'b')]),
      measure,
      policy: defaultContextPolicy,
    });
    const invalid = stages.find((stage) => stage.stage === 'validate')!.removed;
    expect(invalid.map((entry) => entry.reason)).toEqual(['message-invalid']);
    const deleted = { ...row(1, 'a'), deletedAt: new Date(0) };
    try {
      loadContextSegments({
        view: view([deleted, row(Number.NaN, 'tail', true)]),
        measure,
        policy: defaultContextPolicy,
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ContextEmptyError);
      expect((error as ContextEmptyError).loadedMessages).toBe(2);
    }
  });
});
