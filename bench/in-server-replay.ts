// Captured append statements replayed inside the server, for the attribution benchmarks: a procedure's loop of
// EXECUTE and COMMIT on a fresh database, so that neither the network nor the client counts, only the statements.
import postgres from 'postgres';
import { backendCpuMs } from './cpu.js';
import type { BenchServer } from './server.js';

/** What the counted half of a replay cost its backend. */
export interface ReplaySample {
  /** CPU time in the backend (from /proc: utime + stime, 10 ms ticks). */
  cpuMs: number;
  /** Elapsed time in the backend. */
  ms: number;
  /** WAL bytes written. */
  wal: number;
}

/** How many messages captured append statements hold (each item names its `"messageId"`). */
export function countMessages(statements: string[]): number {
  return statements.reduce((sum, statement) => sum + (statement.match(/"messageId"/g)?.length ?? 0), 0);
}

/** The thread rows of `database` without what the appends wrote to them: the replays start from fresh threads. */
export async function capturedThreads(server: BenchServer, database: string): Promise<Record<string, unknown>[]> {
  const capture = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
  try {
    return (await capture`select * from agent_thread`).map(
      ({ last_activity_minute: _a, next_sequence: _n, last_message_at: _l, ...rest }) => rest,
    );
  } finally {
    await capture.end();
  }
}

/**
 * Replays `statements` on a fresh migrated `database` holding `threads`, after `prepare` has run as the superuser
 * (the DDL of the variant measured). Each statement runs in its own transaction, as the store sends it (a thread row
 * updated many times in one transaction would grow a chain of row versions that no real append walks). The first
 * half warms the caches and plans; the second half is counted.
 */
export async function replayInServer(
  server: BenchServer,
  {
    database,
    threads,
    statements,
    prepare,
  }: {
    database: string;
    threads: Record<string, unknown>[];
    statements: string[];
    prepare: (admin: postgres.Sql) => Promise<void>;
  },
): Promise<ReplaySample> {
  await server.createDatabase(database, { migrated: true });
  const admin = postgres(server.adminUrl(database), { max: 1, onnotice: () => {} });
  try {
    await admin`insert into agent_thread ${admin(threads)}`;
    await admin`create table replay_statement (i integer primary key, q text)`;
    await admin`insert into replay_statement ${admin(statements.map((q, i) => ({ i, q })))}`;
    // The append functions switch to the application role for the rest of their transaction.
    await admin`grant select on replay_statement to public`;
    await admin.unsafe(`create procedure replay_statements(p_from integer, p_to integer, inout ms float8,
      inout wal bigint) language plpgsql as $$
      declare started timestamptz; lsn pg_lsn; r record;
      begin
        lsn := pg_current_wal_insert_lsn();
        started := clock_timestamp();
        for r in select q from replay_statement where i >= p_from and i < p_to order by i loop
          execute r.q;
          commit;
        end loop;
        ms := extract(epoch from clock_timestamp() - started) * 1000;
        wal := pg_current_wal_insert_lsn() - lsn;
      end $$`);
    await prepare(admin);
    const half = Math.floor(statements.length / 2);
    await admin.unsafe(`call replay_statements(0, ${half}, null, null)`);
    const [{ pid }] = await admin.unsafe<{ pid: number }[]>('select pg_backend_pid() as pid');
    const cpuBefore = backendCpuMs(pid!);
    const [row] = await admin.unsafe<{ ms: number; wal: string }[]>(
      `call replay_statements(${half}, ${statements.length}, null, null)`,
    );
    return { cpuMs: backendCpuMs(pid!) - cpuBefore, ms: Number(row!.ms), wal: Number(row!.wal) };
  } finally {
    await admin.end();
    await server.dropDatabase(database);
  }
}
