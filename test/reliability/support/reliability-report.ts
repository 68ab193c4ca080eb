import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RELIABILITY_SCALE } from './reliability-scale.js';
import { seededRandom, type SeededRandom } from './seeded-random.js';

/** Where each suite writes its figures as JSON (one file per suite and backend). */
export const RESULTS_FOLDER = process.env.RELIABILITY_RESULTS ?? join(tmpdir(), 'agent-history-reliability');

/** One violation: what was checked, and what was seen instead. Kept short so a report stays readable. */
export interface Violation {
  check: string;
  detail: string;
}

/**
 * Counts attempts and violations of one suite. A suite asserts `violations` is empty at the end (so a failure
 * lists every violation, not only the first) and `record()` prints and writes the figures.
 */
export class ReliabilityTally {
  readonly attempts = new Map<string, number>();
  readonly violations: Violation[] = [];
  readonly notes = new Map<string, number | string>();
  private readonly startedAt = performance.now();

  constructor(readonly suite: string) {}

  /** Counts one attempt of `kind` (an operation, a fault, an input). */
  attempt(kind: string, count = 1): void {
    this.attempts.set(kind, (this.attempts.get(kind) ?? 0) + count);
  }

  /** Records a violation; `detail` is cut to 300 characters. */
  violation(check: string, detail: string): void {
    if (this.violations.length < 1000) this.violations.push({ check, detail: detail.slice(0, 300) });
    else this.notes.set('violations-truncated', 'yes');
  }

  /** Checks a condition, recording a violation when it fails. Returns the condition. */
  expect(condition: boolean, check: string, detail: () => string): boolean {
    if (!condition) this.violation(check, detail());
    return condition;
  }

  /** Counts an observation that is not a violation (e.g. how many kills landed after a commit). */
  note(key: string, value: number | string = 1): void {
    const previous = this.notes.get(key);
    this.notes.set(key, typeof value === 'number' && typeof previous === 'number' ? previous + value : value);
  }

  get totalAttempts(): number {
    let total = 0;
    for (const count of this.attempts.values()) total += count;
    return total;
  }

  /** Prints one line and writes `<RESULTS_FOLDER>/<suite>.json`. */
  record(): void {
    const result = {
      suite: this.suite,
      scale: RELIABILITY_SCALE,
      attempts: this.totalAttempts,
      violations: this.violations.length,
      byKind: Object.fromEntries([...this.attempts].sort(([a], [b]) => a.localeCompare(b))),
      notes: Object.fromEntries(this.notes),
      seconds: Math.round((performance.now() - this.startedAt) / 100) / 10,
      firstViolations: this.violations.slice(0, 20),
    };
    mkdirSync(RESULTS_FOLDER, { recursive: true });
    writeFileSync(
      join(RESULTS_FOLDER, `${this.suite.replaceAll(/[^a-z0-9-]+/gi, '-')}.json`),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    console.log(
      `[reliability] ${this.suite}: ${result.attempts} attempts, ${result.violations} violations, ${result.seconds}s ${JSON.stringify(result.byKind)}${this.notes.size ? ` notes ${JSON.stringify(result.notes)}` : ''}`,
    );
  }
}

/** A seeded random source and a tally for `suite` that notes the seed first, so a failing run can be replayed. */
export function seededTally(suite: string): { random: SeededRandom; tally: ReliabilityTally } {
  const random = seededRandom();
  const tally = new ReliabilityTally(suite);
  tally.note('seed', random.seed);
  return { random, tally };
}
