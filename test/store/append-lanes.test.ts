import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAppendLanes } from '../../src/store/append-lanes.js';

describe('createAppendLanes', () => {
  it('should hand appends on in the order they entered their lane, whatever they wait for and whichever fail', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ lane: fc.constantFrom('a', 'b'), delay: fc.integer({ min: 0, max: 3 }), fails: fc.boolean() }),
          { maxLength: 25 },
        ),
        async (appends) => {
          const lanes = createAppendLanes();
          const handedOn: Record<string, number[]> = { a: [], b: [] };
          await Promise.all(
            appends.map(async ({ lane, delay, fails }, index) => {
              const turn = lanes.enter(lane);
              // Work before handing on that takes a different number of event-loop turns for each append.
              for (let wait = 0; wait < delay; wait++) await new Promise((resolve) => setImmediate(resolve));
              if (fails) return turn.leave();
              await turn.handOn(async () => handedOn[lane]!.push(index));
            }),
          );
          for (const lane of ['a', 'b'])
            expect(handedOn[lane]).toEqual(
              appends.flatMap((append, index) => (append.lane === lane && !append.fails ? [index] : [])),
            );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('should hand on in one synchronous run every append that is ready behind the first', async () => {
    const lanes = createAppendLanes();
    const turns = [lanes.enter('t'), lanes.enter('t'), lanes.enter('t')];
    const order: number[] = [];
    const later = [turns[2]!.handOn(async () => order.push(2)), turns[1]!.handOn(async () => order.push(1))];
    expect(order).toEqual([]);
    void turns[0]!.handOn(async () => order.push(0));
    // No await in between: the three went in the same run.
    expect(order).toEqual([0, 1, 2]);
    await Promise.all(later);
  });

  it('should stop holding up a lane for an append that is not ready within its patience, and still hand it on', async () => {
    const lanes = createAppendLanes({ patienceMs: 20 });
    const stuck = lanes.enter('t');
    const next = lanes.enter('t');
    const order: string[] = [];
    await next.handOn(async () => order.push('next'));
    expect(order).toEqual(['next']);
    await stuck.handOn(async () => order.push('stuck'));
    expect(order).toEqual(['next', 'stuck']);
    // The lane is forgotten once empty: a new append goes at once.
    await lanes.enter('t').handOn(async () => order.push('later'));
    expect(order).toEqual(['next', 'stuck', 'later']);
  });
});
