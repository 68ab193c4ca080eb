// CPU time spent on appends, client and server, so a throughput ratio can be read against the work each append
// costs. Client: this process (`process.cpuUsage`, user + system: the socket writes to a loopback server are
// system time here). Server: the cluster's postmaster and its children from /proc (utime + stime, plus the
// cutime + cstime the postmaster collected from backends that already exited), in clock ticks.
import { readdirSync, readFileSync } from 'node:fs';

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

export interface CpuSample {
  clientMs: number;
  serverMs: number;
}

export type CpuMeter = () => CpuSample;

export function cpuMeter(postmasterPid: number | null): CpuMeter {
  return () => {
    const usage = process.cpuUsage();
    return {
      clientMs: (usage.user + usage.system) / 1000,
      serverMs: postmasterPid === null ? NaN : serverCpuMs(postmasterPid),
    };
  };
}

/** CPU ms per operation between two samples. */
export function cpuPerOperation(before: CpuSample, after: CpuSample, operations: number) {
  const per = (ms: number) => Math.round((ms / Math.max(operations, 1)) * 1000) / 1000;
  const clientMs = after.clientMs - before.clientMs;
  const serverMs = after.serverMs - before.serverMs;
  return { clientMs: per(clientMs), serverMs: per(serverMs), totalMs: per(clientMs + serverMs) };
}
