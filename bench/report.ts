// Turns the per-run results into min / median / max figures, per-run ratios and PASS / MISS per target.
import { round, spread, type Spread } from './stats.js';

type Json = any; // results JSON, shaped by run.ts

export interface TargetRow {
  target: string;
  measured: string;
  ratio: Spread | null;
  limit: string;
  verdict: 'PASS' | 'MISS' | 'n/a' | 'info';
}

const fmt = (value: number | undefined | null, digits = 1) =>
  value == null || !Number.isFinite(value) ? '–' : String(round(value, digits));
export const fmtSpread = (s: Spread | null, digits = 1) =>
  s ? `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})` : '–';
const perRun = (runs: Json[], pick: (run: Json) => number | undefined) =>
  spread(runs.map((run) => pick(run) ?? Number.NaN));
const p50 = (row: Json, op: string) => row?.[op]?.ms?.p50 as number | undefined;
const bySize = (rows: Json[] | undefined, size: number) => rows?.find((row: Json) => row.size === size);

function verdict(ratio: Spread | null, ok: (value: number) => boolean): TargetRow['verdict'] {
  return ratio ? (ok(ratio.median) ? 'PASS' : 'MISS') : 'n/a';
}

export function evaluateTargets(runs: Json[], sizes: number[]): TargetRow[] {
  const rows: TargetRow[] = [];
  const rate = (workload: 'w1' | 'w2', peer: string) => perRun(runs, (run) => run[workload]?.[peer]?.appendsPerSecond);
  const OURS: Record<string, string> = {
    'agent-history': 'agent-history (RLS, app login)',
    'agent-history-background': "agent-history, search: 'background'",
  };
  const ratioTarget = (
    workload: 'w1' | 'w2',
    peer: string,
    label: string,
    limit: number,
    info = false,
    ours = 'agent-history',
  ) => {
    const ratio = perRun(
      runs,
      (run) => run[workload]?.[ours]?.appendsPerSecond / run[workload]?.[peer]?.appendsPerSecond,
    );
    if (!ratio && (info || ours !== 'agent-history')) return;
    rows.push({
      target: `${workload.toUpperCase()} ${label}: ${OURS[ours]} ${info ? 'vs' : `≥ ${limit}×`} ${peer}`,
      measured: `${fmtSpread(rate(workload, ours), 0)} vs ${fmtSpread(rate(workload, peer), 0)} appends/s`,
      ratio,
      limit: info ? '–' : `≥ ${limit.toFixed(2)}`,
      verdict: info ? 'info' : verdict(ratio, (value) => value >= limit),
    });
  };
  ratioTarget('w1', 'bare-insert', 'append', 0.6);
  ratioTarget('w1', 'mastra-pg', 'append', 2);
  ratioTarget('w1', 'drizzle-chatbot', 'append', 0, true);
  ratioTarget('w1', 'bare-agent-table', 'append (what the append path adds to its own table)', 0, true);
  const cost = (field: string) =>
    perRun(runs, (run) => {
      const cpu = run.w1?.['agent-history']?.cpuMsPerAppend;
      return field === 'cpu' ? cpu?.clientMs + cpu?.serverMs : cpu?.walBytes;
    });
  const cpu = cost('cpu');
  rows.push({
    target: 'W1 CPU per append, client + server ≤ 0.3 ms',
    measured: `${fmtSpread(
      perRun(runs, (run) => run.w1?.['agent-history']?.cpuMsPerAppend?.clientMs),
      3,
    )} + ${fmtSpread(
      perRun(runs, (run) => run.w1?.['agent-history']?.cpuMsPerAppend?.serverMs),
      3,
    )} ms`,
    ratio: cpu,
    limit: '≤ 0.30',
    verdict: verdict(cpu, (value) => value <= 0.3),
  });
  const wal = cost('wal');
  rows.push({
    target: 'W1 WAL per append ≤ 3 KB (bytes)',
    measured: `bare INSERT ${fmtSpread(
      perRun(runs, (run) => run.w1?.['bare-insert']?.cpuMsPerAppend?.walBytes),
      0,
    )} B`,
    ratio: wal,
    limit: '≤ 3000',
    verdict: verdict(wal, (value) => value <= 3000),
  });
  ratioTarget('w2', 'bare-insert', 'hot thread', 1.5);
  ratioTarget('w2', 'mastra-pg', 'hot thread', 4);
  // The same store indexing search in the background: its peer's CPU and WAL include the drain after the appends.
  for (const workload of ['w1', 'w2'] as const) {
    const label = workload === 'w1' ? 'append' : 'hot thread';
    ratioTarget(workload, 'bare-insert', label, workload === 'w1' ? 0.6 : 1.5, false, 'agent-history-background');
    ratioTarget(workload, 'mastra-pg', label, workload === 'w1' ? 2 : 4, false, 'agent-history-background');
    const settled = perRun(
      runs,
      (run) =>
        run[workload]?.['agent-history-background']?.settledAppendsPerSecond /
        run[workload]?.['mastra-pg']?.appendsPerSecond,
    );
    if (settled)
      rows.push({
        target: `${workload.toUpperCase()} ${label}: agent-history, search: 'background', until every message is indexed, vs mastra-pg`,
        measured: `${fmtSpread(
          perRun(runs, (run) => run[workload]?.['agent-history-background']?.settledAppendsPerSecond),
          0,
        )} vs ${fmtSpread(rate(workload, 'mastra-pg'), 0)} appends/s`,
        ratio: settled,
        limit: '–',
        verdict: 'info',
      });
  }
  ratioTarget('w2', 'drizzle-chatbot', 'hot thread', 0, true);
  const pglite = perRun(
    runs,
    (run) => run.w5?.w1?.['agent-history']?.appendsPerSecond / run.w5?.w1?.['bare-insert']?.appendsPerSecond,
  );
  if (pglite) {
    rows.push({
      target: 'PGlite W1 append: agent-history ≥ 0.4× a bare INSERT on the same PGlite',
      measured: `${fmtSpread(
        perRun(runs, (run) => run.w5?.w1?.['agent-history']?.appendsPerSecond),
        0,
      )} vs ${fmtSpread(
        perRun(runs, (run) => run.w5?.w1?.['bare-insert']?.appendsPerSecond),
        0,
      )} appends/s`,
      ratio: pglite,
      limit: '≥ 0.40',
      verdict: verdict(pglite, (value) => value >= 0.4),
    });
  }
  // The floors (not the store): the guarantees without and with the search index, one append per statement or
  // combined, each against the bare INSERT of its run; and the store against the floors of a searchable log.
  const floors: [string, string, (run: Json) => Json][] = [
    ['W1 append', '', (run) => run.w1],
    ['PGlite W1 append', ' on the same PGlite', (run) => run.w5?.w1],
  ];
  for (const [label, where, of] of floors) {
    const pairs: [string, string, string][] = [
      ['guarded-insert', 'bare-insert', 'the guarded floor (the guarantees, no search index; not the store)'],
      ['guarded-insert', 'mastra-pg', 'the guarded floor (the guarantees, no search index; not the store)'],
      [
        'guarded-insert-search',
        'bare-insert',
        'the guarded floor of a searchable log (every message indexed; not the store)',
      ],
      ['agent-history', 'guarded-insert-search', 'agent-history (as the README sets it up)'],
      [
        'guarded-batch-search',
        'bare-insert',
        'the combining floor of a searchable log (appends sent together, as the store does; not the store)',
      ],
      ['agent-history', 'guarded-batch-search', 'agent-history (as the README sets it up)'],
      [
        'guarded-batch-search-1',
        'bare-insert',
        'the combining floor of a searchable log, one statement at a time (not the store)',
      ],
    ];
    for (const [peer, against, name] of pairs) {
      const ratio = perRun(runs, (run) => of(run)?.[peer]?.appendsPerSecond / of(run)?.[against]?.appendsPerSecond);
      if (!ratio) continue;
      rows.push({
        target: `${label}: ${name} vs ${against}${where}`,
        measured: `${fmtSpread(
          perRun(runs, (run) => of(run)?.[peer]?.appendsPerSecond),
          0,
        )} vs ${fmtSpread(
          perRun(runs, (run) => of(run)?.[against]?.appendsPerSecond),
          0,
        )} appends/s`,
        ratio,
        limit: '–',
        verdict: 'info',
      });
    }
  }
  const checks = runs.map((run) => run.w2?.['agent-history']);
  const sequenceOk = checks.every((result) => result?.verify?.ok && result?.sequences?.ok);
  rows.push({
    target: 'W2 hot thread: no gap, no duplicate, no commit-order inversion (every run)',
    measured: checks
      .map((result) =>
        result
          ? `rows ${result.sequences?.rows}, seq ${result.sequences?.minSequence}..${result.sequences?.maxSequence}, inversions ${result.sequences?.commitOrderInversions}`
          : '–',
      )
      .join('; '),
    ratio: null,
    limit: '0 / 0 / 0',
    verdict: checks.some((result) => !result) ? 'n/a' : sequenceOk ? 'PASS' : 'MISS',
  });
  // Growth compares like with like: from the smallest thread of at least 1,000 messages, whose newest page and tail
  // hold as many messages as the largest one's (a 10-message thread's page holds 10).
  const smallest = sizes.find((size) => size >= 1_000) ?? sizes[0]!;
  const largest = sizes.at(-1)!;
  const growth = (op: string) =>
    perRun(
      runs,
      (run) =>
        p50(bySize(run.w3?.['agent-history'], largest), op)! / p50(bySize(run.w3?.['agent-history'], smallest), op)!,
    );
  for (const [op, label] of [
    ['newest50', 'newest-50 page'],
    ['contextSnapshot', 'context load (snapshot + tail)'],
  ] as const) {
    const ratio = growth(op);
    rows.push({
      target: `W3 ${label}: growth ${smallest} → ${largest} messages ≤ 1.5×`,
      measured: `${fmtSpread(
        perRun(runs, (run) => p50(bySize(run.w3?.['agent-history'], smallest), op)),
        2,
      )} → ${fmtSpread(
        perRun(runs, (run) => p50(bySize(run.w3?.['agent-history'], largest), op)),
        2,
      )} ms`,
      ratio,
      limit: '≤ 1.50',
      verdict: verdict(ratio, (value) => value <= 1.5),
    });
  }
  for (const size of sizes.filter((size) => size >= 10_000)) {
    for (const [op, bareOp, limit, label] of [
      ['newest50', 'newest50', 1.3, 'newest-50 page'],
      ['contextSnapshot', 'newest50', 1.5, 'context load (snapshot + tail) vs the bare newest-50'],
      ['whole', 'whole', 1.3, 'whole thread'],
    ] as const) {
      if (op === 'whole' && size !== 10_000) continue;
      const ratio = perRun(
        runs,
        (run) =>
          p50(bySize(run.w3?.['agent-history'], size), op)! / p50(bySize(run.w3?.['bare-insert'], size), bareOp)!,
      );
      if (!ratio) continue;
      rows.push({
        target: `W3 ${label} at ${size} messages ≤ ${limit}× the bare read`,
        measured: `${fmtSpread(
          perRun(runs, (run) => p50(bySize(run.w3?.['agent-history'], size), op)),
          2,
        )} vs ${fmtSpread(
          perRun(runs, (run) => p50(bySize(run.w3?.['bare-insert'], size), bareOp)),
          2,
        )} ms`,
        ratio,
        limit: `≤ ${limit.toFixed(2)}`,
        verdict: verdict(ratio, (value) => value <= limit),
      });
    }
  }
  // The guarded floor (not the store): the newest 50 UIMessages under forced RLS in one function, nothing else.
  for (const size of sizes.filter((size) => size >= 10_000)) {
    const floor = perRun(
      runs,
      (run) =>
        p50(bySize(run.w3?.['agent-history'], size), 'newest50Floor')! /
        p50(bySize(run.w3?.['bare-insert'], size), 'newest50')!,
    );
    if (floor)
      rows.push({
        target: `W3 the guarded floor of a newest-50 page (a UIMessage's columns under forced RLS, one function; not the store) at ${size} messages, vs the bare read`,
        measured: `${fmtSpread(
          perRun(runs, (run) => p50(bySize(run.w3?.['agent-history'], size), 'newest50Floor')),
          2,
        )} ms`,
        ratio: floor,
        limit: '–',
        verdict: 'info',
      });
  }
  // The same page with every stored field (`listMessages`): what a page costs beyond a chat window's.
  const stored = perRun(
    runs,
    (run) =>
      p50(bySize(run.w3?.['agent-history'], largest), 'newest50Stored')! /
      p50(bySize(run.w3?.['bare-insert'], largest), 'newest50')!,
  );
  if (stored)
    rows.push({
      target: `W3 newest-50 page of stored messages (listMessages, every field) at ${largest} messages, vs the bare read`,
      measured: `${fmtSpread(
        perRun(runs, (run) => p50(bySize(run.w3?.['agent-history'], largest), 'newest50Stored')),
        2,
      )} ms`,
      ratio: stored,
      limit: '–',
      verdict: 'info',
    });
  const deep = perRun(runs, (run) => {
    const row = bySize(run.w3?.['agent-history'], largest);
    return p50(row, 'deepPage')! / p50(row, 'newest50')!;
  });
  rows.push({
    target: `W3 keyset page at depth (before ≈ middle) ≤ 1.3× the first page, at ${largest} messages`,
    measured: `${fmtSpread(
      perRun(runs, (run) => p50(bySize(run.w3?.['agent-history'], largest), 'deepPage')),
      2,
    )} vs ${fmtSpread(
      perRun(runs, (run) => p50(bySize(run.w3?.['agent-history'], largest), 'newest50')),
      2,
    )} ms`,
    ratio: deep,
    limit: '≤ 1.30',
    verdict: verdict(deep, (value) => value <= 1.3),
  });
  const noSnapshot = growth('contextNoSnapshot');
  rows.push({
    target: `W3 context load without a snapshot (maxTailMessages 50): growth ${smallest} → ${largest}`,
    measured: '',
    ratio: noSnapshot,
    limit: '–',
    verdict: 'info',
  });
  return rows;
}

export function targetsTable(rows: TargetRow[]): string {
  const lines = [
    '| target | measured: median (min–max) | ratio: median (min–max) | limit | |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const row of rows)
    lines.push(`| ${row.target} | ${row.measured} | ${fmtSpread(row.ratio, 2)} | ${row.limit} | **${row.verdict}** |`);
  return lines.join('\n');
}

/** W1 / W2 side by side: throughput and latency of every peer, ratios of agent-history to each. */
export function appendTable(runs: Json[], workload: 'w1' | 'w2', peers: string[]): string {
  const lines = [
    `| peer | appends/s | p50 ms | p99 ms | agent-history ÷ peer (appends/s) | CPU ms per append: client + server | WAL bytes per append | no loss, no duplicate${workload === 'w1' ? ', append order' : ''} |${workload === 'w2' ? ' landed behind a committed message (per run) |' : ''}`,
    `| --- | --- | --- | --- | --- | --- | --- | --- |${workload === 'w2' ? ' --- |' : ''}`,
  ];
  for (const peer of peers) {
    const rate = perRun(runs, (run) => run[workload]?.[peer]?.appendsPerSecond);
    const ratio = perRun(
      runs,
      (run) => run[workload]?.['agent-history']?.appendsPerSecond / run[workload]?.[peer]?.appendsPerSecond,
    );
    const verified = runs.map((run) => {
      const verify = run[workload]?.[peer]?.verify;
      if (!verify) return undefined;
      return workload === 'w1' ? verify.ok : verify.lost === 0 && verify.duplicates === 0;
    });
    const behind =
      workload === 'w2'
        ? ` ${runs.map((run) => run.w2?.[peer]?.verify?.landedBehindCommitted ?? '–').join(' / ')} |`
        : '';
    const cpu = `${fmtSpread(
      perRun(runs, (run) => run[workload]?.[peer]?.cpuMsPerAppend?.clientMs),
      2,
    )} + ${fmtSpread(
      perRun(runs, (run) => run[workload]?.[peer]?.cpuMsPerAppend?.serverMs),
      2,
    )}`;
    const wal = fmtSpread(
      perRun(runs, (run) => run[workload]?.[peer]?.cpuMsPerAppend?.walBytes),
      0,
    );
    lines.push(
      `| ${peer} | ${fmtSpread(rate, 0)} | ${fmtSpread(
        perRun(runs, (run) => run[workload]?.[peer]?.latencyMs?.p50),
        1,
      )} | ${fmtSpread(
        perRun(runs, (run) => run[workload]?.[peer]?.latencyMs?.p99),
        1,
      )} | ${peer === 'agent-history' ? '1' : fmtSpread(ratio, 2)} | ${cpu} | ${wal} | ${verified.every((value) => value === true) ? 'yes' : verified.map((value) => (value ? 'yes' : 'NO')).join('/')} |${behind}`,
    );
  }
  return lines.join('\n');
}

/** W3: median p50 (min–max over runs) per operation and size, with growth vs the smallest size. */
export function loadTable(
  runs: Json[],
  key: (run: Json) => Json[] | undefined,
  ops: [string, string][],
  sizes: number[],
): string {
  const lines = [
    `| operation | ${sizes.map((size) => `${size.toLocaleString('en-US')} msgs`).join(' | ')} | growth ${sizes[0]} → ${sizes.at(-1)} |`,
    `| --- |${sizes.map(() => ' --- |').join('')} --- |`,
  ];
  for (const [op, label] of ops) {
    const cells = sizes.map((size) =>
      fmtSpread(
        perRun(runs, (run) => p50(bySize(key(run), size), op)),
        2,
      ),
    );
    const growth = perRun(
      runs,
      (run) => p50(bySize(key(run), sizes.at(-1)!), op)! / p50(bySize(key(run), sizes[0]!), op)!,
    );
    lines.push(`| ${label} (ms) | ${cells.join(' | ')} | ${fmtSpread(growth, 2)}× |`);
  }
  return lines.join('\n');
}

/** W4: what bench/prepare-step.ts returned, per size and scenario, over the runs that had it. */
export function prepareStepTable(runs: Json[]): string {
  const measured = runs.filter((run) => Array.isArray(run.w4?.result));
  if (measured.length === 0) return `Not measured: ${runs.map((run) => run.w4?.skipped ?? 'not run').join('; ')}.`;
  const lines = [
    `Runs with W4: ${measured.length} of ${runs.length}.`,
    '',
    '| messages | scenario | model messages at the step | prepareStep median ms | p95 ms | recount-everything baseline median ms | speedup |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  const keys = measured[0].w4.result.map((row: Json) => `${row.messages}|${row.scenario}`);
  for (const key of keys) {
    const pick = (field: string) =>
      perRun(measured, (run) => run.w4.result.find((row: Json) => `${row.messages}|${row.scenario}` === key)?.[field]);
    const [messages, scenario] = key.split('|');
    lines.push(
      `| ${messages} | ${scenario} | ${fmtSpread(pick('stepMessages'), 0)} | ${fmtSpread(pick('medianMs'), 2)} | ${fmtSpread(pick('p95Ms'), 1)} | ${fmtSpread(pick('baselineMedianMs'), 1)} | ${fmtSpread(pick('speedup'), 1)}× |`,
    );
  }
  return lines.join('\n');
}
