// What an operation costs, independent of how loaded the machine is, so a throughput ratio can be read against
// the work each append does and a noisy run can be recognised:
//  - client CPU: this process (`process.cpuUsage`, user + system: the socket writes to a loopback server are system
//    time here);
//  - server CPU: the cluster's postmaster and its children from /proc (utime + stime, plus the cutime + cstime the
//    postmaster collected from backends that already exited), in clock ticks;
//  - WAL bytes: `pg_current_wal_insert_lsn()` before and after (only the bench writes to its cluster);
//  - foreign CPU: the machine's busy time (/proc/stat) minus the two above: what other processes took meanwhile.
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
  } catch {
    return null;
  }
}

/** Server CPU ms: the postmaster (with reaped children) plus its live children. */
export function serverCpuMs(postmasterPid: number): number {
  const own = statFields(postmasterPid);
  if (!own) return NaN;
  // After the ')' field 3 is index 0, so utime (14) = 11, stime = 12, cutime = 13, cstime = 14, ppid (4) = 1.
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === postmasterPid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * TICK_MS;
}

/** One server backend's CPU ms so far (utime + stime from /proc: the server runs on this machine). */
export function backendCpuMs(pid: number): number {
  const fields = statFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) * TICK_MS : NaN;
}

/** The whole machine's busy CPU ms since boot (every core): user, nice, system, irq, softirq, steal. */
export function machineBusyMs(): number {
  try {
    const [line] = readFileSync('/proc/stat', 'utf8').split('\n');
    const [, user, nice, system, , , irq, softirq, steal] = line!.trim().split(/\s+/).map(Number);
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * TICK_MS;
  } catch {
    return NaN;
  }
}

export interface CpuSample {
  clientMs: number;
  serverMs: number;
  /** The cluster's WAL insert position in bytes, or NaN without a WAL probe. */
  walBytes: number;
  machineBusyMs: number;
  wallMs: number;
}

export type CpuMeter = () => Promise<CpuSample>;

/** `end` as if the meter had stopped from `paused` to `resumed` (a check read between, not measured). */
export function withoutPause(paused: CpuSample, resumed: CpuSample, end: CpuSample): CpuSample {
  const less = (field: keyof CpuSample) => end[field] - (resumed[field] - paused[field]);
  return {
    clientMs: less('clientMs'),
    serverMs: less('serverMs'),
    walBytes: less('walBytes'),
    machineBusyMs: less('machineBusyMs'),
    wallMs: less('wallMs'),
  };
}

/** A meter for the cluster of `postmasterPid`; `walBytes` reads its WAL insert position. */
export function cpuMeter(postmasterPid: number | null, walBytes?: () => Promise<number>): CpuMeter {
  return async () => {
    const wal = walBytes ? await walBytes() : NaN;
    const usage = process.cpuUsage();
    return {
      clientMs: (usage.user + usage.system) / 1000,
      serverMs: postmasterPid === null ? NaN : serverCpuMs(postmasterPid),
      walBytes: wal,
      machineBusyMs: machineBusyMs(),
      wallMs: performance.now(),
    };
  };
}

/** CPU ms and WAL bytes per operation between two samples, and the cores other processes kept busy meanwhile. */
export function cpuPerOperation(before: CpuSample, after: CpuSample, operations: number) {
  const per = (value: number, digits = 3) =>
    Math.round((value / Math.max(operations, 1)) * 10 ** digits) / 10 ** digits;
  const clientMs = after.clientMs - before.clientMs;
  const serverMs = after.serverMs - before.serverMs;
  const foreignMs = after.machineBusyMs - before.machineBusyMs - clientMs - serverMs;
  return {
    clientMs: per(clientMs),
    serverMs: per(serverMs),
    totalMs: per(clientMs + serverMs),
    walBytes: per(after.walBytes - before.walBytes, 0),
    /** Cores other processes kept busy while this ran (≈ 0 on a quiet machine; /proc/stat ticks are coarse). */
    foreignCores: Math.round((Math.max(foreignMs, 0) / Math.max(after.wallMs - before.wallMs, 1)) * 100) / 100,
  };
}
