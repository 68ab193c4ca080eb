import fc from 'fast-check';

/** How a thread of the tree is removed before the redaction. */
export type Deletion = 'deleteThread' | 'softDeleteThread' | 'retention';

/** One fork of the tree: of which earlier thread (0 is the root), where, and what it appends after the copies. */
export interface ForkPlan {
  /** The index of the thread forked from: 0 is the root, `i` the i-th fork (always an earlier one). */
  from: number;
  /** Where in the source the fork is cut, as a share of its messages (0 copies none, 1 all). */
  cut: number;
  /** Messages appended to the fork after the copies (`m-<sequence>` ids, a sibling's id may repeat). */
  appends: number;
  /** Whether the fork writes a summary (and a snapshot) over its copy of the secret message, if it holds one. */
  derived: boolean;
  /** How the fork is removed before the redaction, or null. */
  deletion: Deletion | null;
}

/** A random fork tree over a root thread that carries the secret in one message. */
export interface ForkTreePlan {
  /** Messages of the root thread. */
  rootMessages: number;
  /** The sequence (1-based) of the root's message that carries the secret. */
  secretAt: number;
  /** The forks, in creation order. */
  forks: ForkPlan[];
  /** How the root is removed before the redaction, or null. */
  rootDeletion: Deletion | null;
  /** Span redaction (the secret is also in the root's title and metadata and the snapshots' JSON) or whole message. */
  mode: 'spans' | 'whole-message';
  /** Picks the thread redacted in, among the live ones holding a copy (an index into them, modulo their count). */
  target: number;
}

// Two threads in three stay; the third is deleted one of three ways.
const deletion: fc.Arbitrary<Deletion | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 2 },
  { arbitrary: fc.constantFrom<Deletion>('deleteThread', 'softDeleteThread', 'retention'), weight: 1 },
);

/** Random fork trees: 1 to 7 forks of any earlier thread, cut anywhere, with deletions anywhere (the root too). */
export const forkTreePlan: fc.Arbitrary<ForkTreePlan> = fc
  .record({
    rootMessages: fc.integer({ min: 2, max: 6 }),
    secretShare: fc.double({ min: 0, max: 0.6, noNaN: true, maxExcluded: true }),
    forks: fc.array(
      fc.record({
        fromShare: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        // Most forks copy everything, so chains of copies are long; the rest are cut anywhere.
        cut: fc.oneof(
          { arbitrary: fc.constant(1), weight: 3 },
          { arbitrary: fc.double({ min: 0, max: 1, noNaN: true }), weight: 2 },
        ),
        appends: fc.integer({ min: 0, max: 2 }),
        derived: fc.boolean(),
        deletion,
      }),
      { minLength: 1, maxLength: 7 },
    ),
    rootDeletion: deletion,
    mode: fc.constantFrom<'spans' | 'whole-message'>('spans', 'whole-message'),
    target: fc.nat({ max: 50 }),
  })
  .map(({ rootMessages, secretShare, forks, ...rest }) => ({
    ...rest,
    rootMessages,
    secretAt: 1 + Math.floor(secretShare * rootMessages),
    forks: forks.map(({ fromShare, ...fork }, index) => ({ ...fork, from: Math.floor(fromShare * (index + 1)) })),
  }));
