import { sql } from 'drizzle-orm';
import type postgres from 'postgres';
import type { AgentHistoryDatabase } from '../../../src/tenant/database.js';
import { rowsOf } from '../../../src/tenant/database.js';

/** What one pooled connection carries between transactions. */
export interface ConnectionState {
  pid: number;
  currentUser: string;
  sessionUser: string;
  /** `current_setting('role')`: 'none' unless a SET ROLE outlived its transaction. */
  role: string;
  /** `current_setting('app.tenant_id', true)`: null or '' unless a tenant outlived its transaction. */
  tenant: string | null;
  /** The probe ran inside a transaction begun earlier: a transaction left open on the connection. */
  inTransaction: boolean;
}

const PROBE = `select pg_backend_pid() as pid, current_user::text as current_user, session_user::text as session_user,
  current_setting('role') as role, current_setting('app.tenant_id', true) as tenant`;
/** Fails with 25P01 outside a transaction block; succeeds only on a connection left inside an open transaction. */
const OPEN_TRANSACTION_PROBE = 'savepoint reliability_probe';

type ProbeRow = { pid: number; current_user: string; session_user: string; role: string; tenant: string | null };
const toState = (row: ProbeRow, inTransaction: boolean): ConnectionState => ({
  pid: Number(row.pid),
  currentUser: row.current_user,
  sessionUser: row.session_user,
  role: row.role,
  tenant: row.tenant,
  inTransaction,
});

async function isInTransaction(run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (error) {
    if (
      (error as { code?: string }).code === '25P01' ||
      (error as { cause?: { code?: string } }).cause?.code === '25P01'
    )
      return false;
    throw error;
  }
}

/**
 * Reads the state of every connection of a postgres-js pool: it reserves `size` connections at once (so each
 * is a distinct connection, opened if need be), runs the probe on each outside any transaction, and releases
 * them. Call it while no store call is in flight.
 */
export async function probePostgresPool(client: postgres.Sql, size: number): Promise<ConnectionState[]> {
  const reserved = await Promise.all(Array.from({ length: size }, () => client.reserve()));
  try {
    return await Promise.all(
      reserved.map(async (connection) => {
        const [row] = (await connection.unsafe(PROBE)) as unknown as ProbeRow[];
        return toState(row!, await isInTransaction(() => connection.unsafe(OPEN_TRANSACTION_PROBE)));
      }),
    );
  } finally {
    for (const connection of reserved) connection.release();
  }
}

/** The same probe on PGlite's single connection, through Drizzle, outside any transaction. */
export async function probeSingleConnection(db: AgentHistoryDatabase): Promise<ConnectionState[]> {
  const [row] = rowsOf<ProbeRow>(await db.execute(sql.raw(PROBE)));
  return [toState(row!, await isInTransaction(() => db.execute(sql.raw(OPEN_TRANSACTION_PROBE))))];
}

/** Why a connection's state is not clean, or null when it is: no tenant, no role, the login user, no open transaction. */
export function describeDirtyConnection(state: ConnectionState, loginUser: string): string | null {
  const problems: string[] = [];
  if (state.tenant !== null && state.tenant !== '') problems.push(`tenant ${state.tenant}`);
  if (state.role !== 'none') problems.push(`role ${state.role}`);
  if (state.currentUser !== loginUser) problems.push(`current_user ${state.currentUser}`);
  if (state.inTransaction) problems.push('open transaction');
  return problems.length === 0 ? null : `pid ${state.pid}: ${problems.join(', ')}`;
}
