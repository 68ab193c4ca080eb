import type { BenchConfig } from './config.js';
import { appendTable, evaluateTargets, fmtSpread, loadTable, prepareStepTable, targetsTable } from './report.js';
import { spread } from './stats.js';
import { w8Table } from './w8-report.js';
import { FLOOR_PEERS } from './peers/guarded-insert-peer.js';

/** The console / markdown report of one `npm run bench`. */
export function renderReport(results: { meta: Record<string, any>; runs: any[] }, config: BenchConfig): string {
  const { runs } = results;
  const peers = ['agent-history', ...config.peers];
  const ahOps: [string, string][] = [
    ['newest50', 'newest-50 page (listChatMessages)'],
    ['deepPage', 'keyset page at depth'],
    ['newest50Stored', 'newest-50 page of stored messages (listMessages)'],
    ['newest50Floor', "the guarded floor, not the store: a UIMessage's columns under forced RLS, one function"],
    ['contextSnapshot', 'context: snapshot + tail'],
    ['contextNoSnapshot', 'context: no snapshot, 50-message tail'],
    ['whole', 'whole thread (listChatMessages, 500/page)'],
  ];
  const peerOps: [string, string][] = [
    ['newest50', 'newest 50'],
    ['whole', 'whole thread'],
  ];
  const out: string[] = [];
  const meta = results.meta;
  out.push(
    `agent-history bench — ${runs.length} run(s), ${config.quick ? 'QUICK sizes' : 'full sizes'}; ${meta.host.cpus} × ${meta.host.cpuModel}, ${meta.host.memGB} GB; ${meta.server.version.split(',')[0]}; Node ${meta.node}`,
  );
  out.push(
    `Load average (1/5/15 min) at start ${meta.host.loadAverageAtStart.join(' / ')}; at the end of each run: ${runs.map((run) => run.loadAverageAtEnd?.join(' / ')).join('; ')}.`,
  );
  const noisy = runs.filter((run) => run.noisy).length;
  out.push(
    meta.noisyAtStart || noisy > 0
      ? `**NOISY — not a quiet record**: ${meta.noisyAtStart ? 'the load average was above BENCH_MAX_LOAD at the start; ' : ''}${noisy} of ${runs.length} run(s) had other processes keeping more than ${config.maxForeignCores} cores busy (${runs.map((run) => run.foreignCores).join(', ')}). Throughputs and ratios are indicative only; CPU and WAL per operation stay comparable.`
      : `Quiet: other processes kept ${runs.map((run) => run.foreignCores).join(', ')} cores busy during the runs (limit ${config.maxForeignCores}).`,
  );
  out.push('Figures: median (min–max) over runs; ratios are computed within each run, then median (min–max).', '');
  if (config.workloads.includes('w1') || config.workloads.includes('w2') || config.workloads.includes('w3'))
    out.push('## Targets', '', targetsTable(evaluateTargets(runs, config.w3.sizes)), '');
  if (config.workloads.includes('w1'))
    out.push(
      `## W1 append (${config.w1.threads} threads × ${config.w1.messages} messages, ${config.w1.concurrency} in flight)`,
      '',
      appendTable(runs, 'w1', peers),
      '',
    );
  if (config.workloads.includes('w2')) {
    out.push(
      `## W2 hot thread (1 thread, ${config.w2.appenders} appenders, ${config.w2.messages} messages)`,
      '',
      appendTable(runs, 'w2', peers),
      '',
    );
    out.push('Order checks per run (lost / dup / writer inv. / real-time inv. / landed behind committed):');
    for (const peer of peers)
      out.push(
        `- ${peer}: ${runs
          .map((run) => {
            const v = run.w2?.[peer]?.verify;
            return v
              ? `${v.lost}/${v.duplicates}/${v.writerInversions}/${v.realtimeInversions}/${v.landedBehindCommitted}`
              : '–';
          })
          .join(', ')}`,
      );
    for (const peer of peers.filter((name) => name.startsWith('agent-history'))) {
      out.push(
        `- ${peer} sequences: ${runs.map((run) => JSON.stringify(run.w2?.[peer]?.sequences ?? null)).join('; ')}`,
      );
    }
    out.push('');
  }
  if (config.workloads.includes('w3')) {
    out.push(
      '## W3 load: agent-history (p50 ms per call)',
      '',
      loadTable(runs, (run) => run.w3?.['agent-history'], ahOps, config.w3.sizes),
      '',
    );
    if (config.peers.includes('bare-insert'))
      out.push(
        '### W3 bare INSERT table (same payloads)',
        '',
        loadTable(runs, (run) => run.w3?.['bare-insert'], peerOps, config.w3.sizes),
        '',
      );
    const mastraSizes = config.w3.sizes.filter((size) => size <= config.w3.mastraMaxSize);
    if (config.peers.includes('mastra-pg'))
      out.push(
        '### W3 Mastra',
        '',
        loadTable(runs, (run) => run.w3?.['mastra-pg'], peerOps, mastraSizes),
        '',
      );
  }
  if (config.workloads.includes('w4'))
    out.push('## W4 prepareStep (bench/prepare-step.ts)', '', prepareStepTable(runs), '');
  if (config.workloads.includes('w5')) {
    out.push(
      '## W5 embedded default (PGlite in memory)',
      '',
      `PGlite create ${runs[0]?.w5?.open?.createMs} ms, migrate ${runs[0]?.w5?.open?.migrateMs} ms.`,
      '',
    );
    out.push(
      `W1 on PGlite (${config.w5.w1.threads} × ${config.w5.w1.messages}):`,
      '',
      appendTable(
        runs.map((run) => ({ w1: run.w5?.w1 })),
        'w1',
        ['agent-history', 'bare-insert', ...FLOOR_PEERS.filter((floor) => config.peers.includes(floor))],
      ),
      '',
    );
    out.push(
      'W3 on PGlite (p50 ms):',
      '',
      loadTable(runs, (run) => run.w5?.w3, ahOps, config.w5.sizes),
      '',
    );
    const demos = runs.map((run) => run.w5?.demo).filter(Boolean);
    const walls = demos.filter((demo: any) => demo.wallMs !== undefined);
    out.push(
      walls.length
        ? `Demo (\`npm run demo\` as a child process, wall time): ${fmtSpread(spread(walls.map((demo: any) => demo.wallMs / 1000)), 1)} s over ${walls.length} run(s); exit codes ${walls.map((demo: any) => demo.exitCode).join(', ')}.`
        : `Demo: ${demos.map((demo: any) => demo.skipped).join('; ') || 'not run'}.`,
      '',
    );
  }
  if (config.workloads.includes('w6')) out.push(tokenClassTable(runs, config), '');
  if (config.workloads.includes('w7')) out.push(firstCallTable(runs), '');
  if (config.workloads.includes('w8')) out.push(w8Table(runs, config.w8), '');
  return out.join('\n');
}

/** W7: initialMessages() plus one prepareStep on long threads with stored counts (ms, min / median / max over runs). */
function firstCallTable(runs: any[]): string {
  const labelOf = (row: any) => String(row.label ?? row.messages);
  const labels: string[] = (runs[0]?.w7 ?? []).map(labelOf);
  const rows = labels.map((label) => {
    const of = (key: string) =>
      runs.map((run) => run.w7?.find((row: any) => labelOf(row) === label)?.ms?.[key] as number);
    const cpu = (key: string) =>
      runs.map((run) => run.w7?.find((row: any) => labelOf(row) === label)?.cpuMs?.[key] as number);
    const tokens = runs[0].w7.find((row: any) => labelOf(row) === label).storedTokens;
    return `| ${label} | ${tokens.toLocaleString('en')} | ${fmtSpread(spread(of('p50')))} | ${fmtSpread(spread(of('p99')))} | ${fmtSpread(spread(cpu('p50')))} |`;
  });
  return [
    '## W7 first call of a request (bench/workloads/w7-first-call.ts)',
    '',
    '| messages | stored tokens | median ms | p99 ms | CPU median ms |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

/** W6: median ms per MB of the guarded counter per Unicode class (the longest event-loop block it causes). */
function tokenClassTable(runs: any[], config: BenchConfig): string {
  const samples: string[] = (runs[0]?.w6 ?? []).map((row: any) => row.sample);
  const rows = samples.map((sample) => {
    const of = (key: string) => runs.map((run) => run.w6?.find((row: any) => row.sample === sample)?.[key] as number);
    const guarded = spread(of('guardedMsPerMB'));
    const bare = spread(of('bareMs'));
    return `| ${sample} | ${fmtSpread(guarded, 0)} | ${of('guardedTokensPerMB')[0]} | ${fmtSpread(bare, 0)} |`;
  });
  return [
    `## W6 token counting per Unicode class (${config.w6.chars.toLocaleString('en')} characters of one class)`,
    '',
    `| class | guarded counter, ms per MB (min / median / max) | tokens per MB | bare tokenizer on ${config.w6.bareChars.toLocaleString('en')} characters, ms |`,
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}
