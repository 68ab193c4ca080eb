// The W8 part of the bench report: one chat turn per peer and chat size, and the two W8 targets.
import { fmtSpread, targetsTable, type TargetRow } from './report.js';
import { spread } from './stats.js';
import type { W8Config } from './workloads/w8-chat-turn.js';
import { WINDOW_FLOOR_MESSAGES } from './workloads/w8-peers.js';

type Json = any;

const sizeOf = (run: Json, peer: string, size: number) => run.w8?.[peer]?.sizes?.find((row: Json) => row.size === size);
const perRun = (runs: Json[], pick: (run: Json) => number | undefined) =>
  spread(runs.map((run) => pick(run) ?? Number.NaN));
const cpuTotal = (run: Json, peer: string, size: number) => sizeOf(run, peer, size)?.one.cpuMsPerTurn.totalMs;
/** Statements of one turn (one chat at a time) outside its streaming checkpoints. */
const outsideCheckpoints = (row: Json) =>
  row ? row.one.statementsPerTurn - row.one.checkpointStatementsPerTurn : undefined;

function w8Targets(runs: Json[], config: W8Config): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const size of config.sizes) {
    const ratio = perRun(runs, (run) => cpuTotal(run, 'agent-history', size) / cpuTotal(run, 'mastra-pg', size));
    rows.push({
      target: `W8 CPU per turn (client + server), chats of ${size}: agent-history ≤ mastra-pg`,
      measured: `${fmtSpread(perRun(runs, (run) => cpuTotal(run, 'agent-history', size)))} vs ${fmtSpread(perRun(runs, (run) => cpuTotal(run, 'mastra-pg', size)))} ms`,
      ratio,
      limit: '≤ 1.00',
      verdict: ratio ? (ratio.median <= 1 ? 'PASS' : 'MISS') : 'n/a',
    });
    if (runs.some((run) => sizeOf(run, 'window-floor', size)))
      rows.push({
        target: `W8 CPU per turn, chats of ${size}: window-floor (a bare store sending the model the newest ${WINDOW_FLOOR_MESSAGES}) vs mastra-pg`,
        measured: `${fmtSpread(perRun(runs, (run) => cpuTotal(run, 'window-floor', size)))} vs ${fmtSpread(perRun(runs, (run) => cpuTotal(run, 'mastra-pg', size)))} ms`,
        ratio: perRun(runs, (run) => cpuTotal(run, 'window-floor', size) / cpuTotal(run, 'mastra-pg', size)),
        limit: '–',
        verdict: 'info',
      });
    const trips = perRun(runs, (run) => outsideCheckpoints(sizeOf(run, 'agent-history', size)));
    rows.push({
      target: `W8 statements per turn outside the streaming checkpoints, chats of ${size}: agent-history ≤ 8`,
      measured: `${fmtSpread(trips)} (checkpoints: ${fmtSpread(perRun(runs, (run) => sizeOf(run, 'agent-history', size)?.one.checkpointStatementsPerTurn))})`,
      ratio: null,
      limit: '≤ 8',
      verdict: trips ? (trips.median <= 8 ? 'PASS' : 'MISS') : 'n/a',
    });
  }
  return rows;
}

/** W8's section of the report: the targets, then one row per chat size and peer. */
export function w8Table(runs: Json[], config: W8Config): string {
  const lines = [
    `## W8 one chat turn (${config.chats} chats of each size; ${config.turns} turns one at a time, ${config.rounds} rounds of ${config.chats} at once)`,
    '',
    targetsTable(w8Targets(runs, config)),
    '',
    `| chat of | peer | CPU ms per turn: client + server | total ÷ mastra-pg | statements per turn (checkpoints) | WAL bytes per turn | ms per turn, 1 chat (p50) | ms per turn, ${config.chats} chats (p50 / p99) | turns/s, ${config.chats} chats | snapshots / summaries per turn | messages the model gets, fewest |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const size of config.sizes)
    for (const peer of config.peers) {
      const of = (pick: (row: Json) => number | undefined) =>
        perRun(runs, (run) => {
          const row = sizeOf(run, peer, size);
          return row ? pick(row) : undefined;
        });
      if (!of((row) => row.one.turns)) {
        lines.push(
          `| ${size} | ${peer} | ${runs.map((run) => run.w8?.[peer]?.error?.split('\n')[0] ?? '–').join('; ')} |`,
        );
        continue;
      }
      const ratio = perRun(runs, (run) => cpuTotal(run, peer, size) / cpuTotal(run, 'mastra-pg', size));
      lines.push(
        `| ${size} | ${peer} | ${fmtSpread(of((row) => row.one.cpuMsPerTurn.clientMs))} + ${fmtSpread(of((row) => row.one.cpuMsPerTurn.serverMs))} | ${fmtSpread(ratio, 2)} ` +
          `| ${fmtSpread(of((row) => row.one.statementsPerTurn))} (${fmtSpread(of((row) => row.one.checkpointStatementsPerTurn))}) | ${fmtSpread(
            of((row) => row.one.walBytesPerTurn),
            0,
          )} ` +
          `| ${fmtSpread(of((row) => row.one.turnMs.p50))} | ${fmtSpread(of((row) => row.many.turnMs.p50))} / ${fmtSpread(of((row) => row.many.turnMs.p99))} ` +
          `| ${fmtSpread(of((row) => row.many.turnsPerSecond))} | ${fmtSpread(
            of((row) => row.snapshotsPerTurn),
            2,
          )} / ${fmtSpread(
            of((row) => row.summariesPerTurn),
            2,
          )} | ${fmtSpread(of((row) => row.one.fewestModelMessages))} |`,
      );
    }
  return lines.join('\n');
}
