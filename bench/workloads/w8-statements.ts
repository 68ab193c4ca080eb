// Counts the statements each peer sends on the wire: postgres-js through its `debug` hook (called once per query
// sent, `begin` and `commit` included), node-postgres (Mastra's driver) by wrapping `Client.prototype.query`, which
// its pool and its transactions go through. A statement is one round trip unless the driver pipelines it.
import pg from 'pg';

export interface StatementCounter {
  /** Statements sent since the counter was made. */
  count: number;
  /** Of those, the statements sent while a streaming checkpoint was being written (exact only one turn at a time). */
  checkpointCount: number;
  /** How many checkpoint writes are under way. */
  checkpointsOpen: number;
  /** When set, each statement's text is pushed here (for the listing of one turn's round trips). */
  trace: string[] | null;
  note(text: string): void;
}

export function statementCounter(): StatementCounter {
  const counter: StatementCounter = {
    count: 0,
    checkpointCount: 0,
    checkpointsOpen: 0,
    trace: null,
    note(text) {
      counter.count++;
      if (counter.checkpointsOpen > 0) counter.checkpointCount++;
      const mark = counter.checkpointsOpen > 0 ? '[checkpoint] ' : '';
      counter.trace?.push(mark + text.replace(/\s+/g, ' ').trim().slice(0, 160));
    },
  };
  return counter;
}

/** The `debug` option of a postgres-js pool that notes each statement on `counter`. */
export const postgresJsDebug = (counter: StatementCounter) => (_connection: number, query: string) =>
  counter.note(query);

let pgCounter: StatementCounter | null = null;
let pgWrapped = false;

/** Notes every node-postgres statement on `counter` (null to stop). */
export function countNodePostgres(counter: StatementCounter | null): void {
  pgCounter = counter;
  if (pgWrapped) return;
  pgWrapped = true;
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const [first] = args;
    const text = typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '');
    pgCounter?.note(text);
    return query.apply(this, args);
  };
}
