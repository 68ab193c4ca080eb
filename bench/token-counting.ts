// `npm run bench:tokens`: the token counter under attack. For each Unicode class (one repeated unit, and code points
// drawn at random so that no piece repeats), counts 1 MB in a fresh process and in a process primed the way an
// attacker primes it (two texts of 140,000 random six-letter words, counted for another tenant first). Side by side
// in one run: the default counter (`loadO200kTokenCounter`) and gpt-tokenizer's shared encoder behind the same
// long-run guard (the previous default, whose merge cache is a `Map` reordered on every hit). Reports CPU ms per MB
// of the synchronous count and the longest the event loop waited while the store's way of counting
// (`countWithoutBlocking`) ran; then what a second tenant's 200 KB message costs after the attack. Every
// measurement runs in its own child process. Environment: TOKEN_BENCH_CHARS (default 1,000,000).
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpuUsage } from 'node:process';
import { fileURLToPath } from 'node:url';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countWithoutBlocking } from '../src/tokens/count-without-blocking.js';
import { guardLongRuns } from '../src/tokens/guard-long-runs.js';
import { loadO200kTokenCounter, type TokenCounter } from '../src/tokens/token-counter.js';
import { TOKEN_CLASS_SAMPLES } from './workloads/w6-token-classes.js';

const CHARS = Number(process.env.TOKEN_BENCH_CHARS ?? 1_000_000);

/** Seeded text generators by class name; each returns `chars` UTF-16 units. */
function classTexts(chars: number): Record<string, () => string> {
  const repeated = Object.fromEntries(
    Object.entries(TOKEN_CLASS_SAMPLES).map(([name, unit]) => [
      name,
      () => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars),
    ]),
  );
  return {
    ...repeated,
    'x☃︎ repeated (the attack)': () => 'x☃︎'.repeat(Math.ceil(chars / 3)).slice(0, chars),
    'random six-letter words': () => randomWords(chars, 1),
    'random latin letters': () => randomPoints([0x61, 0x7a], chars, 2),
    'random CJK ideographs': () => randomPoints([0x4e00, 0x9fff], chars, 3),
    'random Hangul syllables': () => randomPoints([0xac00, 0xd7a3], chars, 4),
    'random Cyrillic': () => randomPoints([0x430, 0x44f], chars, 5),
    'random Arabic': () => randomPoints([0x621, 0x64a], chars, 6),
    'random Devanagari with marks': () => randomPoints([0x905, 0x94d], chars, 7),
    'random emoji': () => randomPoints([0x1f300, 0x1f5ff], chars, 8),
    'random private use': () => randomPoints([0xe000, 0xf8ff], chars, 9),
    'random astral (plane 2)': () => randomPoints([0x20000, 0x2a6df], chars, 10),
    'random bytes as base64': () => randomBase64(chars, 11),
  };
}

/** Seeded integers in [0, 2^31), from the high bits of a 64-bit xorshift (low LCG bits repeat with a short period). */
function lcg(seed: number): () => number {
  const mask = (1n << 64n) - 1n;
  let state = (BigInt(seed) * 0x9e3779b97f4a7c15n + 1n) & mask;
  return () => {
    state ^= (state << 13n) & mask;
    state ^= state >> 7n;
    state ^= (state << 17n) & mask;
    return Number(state >> 33n);
  };
}

function randomPoints([from, to]: [number, number], chars: number, seed: number): string {
  const next = lcg(seed);
  const points: string[] = [];
  for (let length = 0; length < chars;) {
    const point = from + (next() % (to - from + 1));
    points.push(String.fromCodePoint(point));
    length += point > 0xffff ? 2 : 1;
  }
  return points.join('').slice(0, chars);
}

function randomWords(chars: number, seed: number): string {
  const next = lcg(seed);
  const words: string[] = [];
  for (let length = 0; length < chars; length += 7) {
    let word = '';
    for (let letter = 0; letter < 6; letter++) word += String.fromCharCode(0x61 + (next() % 26));
    words.push(word);
  }
  return words.join(' ').slice(0, chars);
}

function randomBase64(chars: number, seed: number): string {
  const next = lcg(seed);
  const bytes = Buffer.alloc(Math.ceil((chars * 3) / 4) + 3);
  for (let index = 0; index < bytes.length; index++) bytes[index] = next() % 256;
  return bytes.toString('base64').slice(0, chars);
}

type CounterName = 'default' | 'shared gpt-tokenizer';

async function counterNamed(name: CounterName): Promise<TokenCounter> {
  if (name === 'default') return loadO200kTokenCounter();
  const options = { disallowedSpecial: new Set<string>() };
  return { id: 'shared', count: guardLongRuns((text) => countTokens(text, options)) };
}

/** CPU ms of `run`, this thread only (the process has no other work). */
function cpuMs(run: () => void): number {
  const before = cpuUsage();
  run();
  const used = cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** The longest gap between two turns of the event loop while `work` runs. */
async function longestBlockMs(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  longest = Math.max(longest, performance.now() - last);
  return longest;
}

interface Measurement {
  syncMsPerMB: number;
  asyncLongestBlockMs: number | null;
  tokens: number;
}

async function measure(counterName: CounterName, className: string, primed: boolean): Promise<Measurement> {
  const base = await counterNamed(counterName);
  base.count('warm up the tokenizer '.repeat(100));
  if (primed) {
    const attacker = base.scoped?.('attacker') ?? base;
    attacker.count(randomWords(1_000_000, 101));
    attacker.count(randomWords(1_000_000, 102));
  }
  const text = classTexts(CHARS)[className]!();
  const counter = base.scoped?.('victim') ?? base;
  let tokens = 0;
  const syncMs = cpuMs(() => (tokens = counter.count(text)));
  let asyncLongestBlockMs: number | null = null;
  if (counter.countAsync) {
    // Another scope, so the count is not a cache hit of the synchronous one.
    const other = base.scoped!('victim, counted again');
    let again = 0;
    asyncLongestBlockMs = await longestBlockMs(async () => {
      [again] = await countWithoutBlocking(other, (each) => [each.count(text)]);
    });
    if (again !== tokens) throw new Error(`countAsync gave ${again} tokens, count ${tokens} (${className})`);
  }
  const megabytes = Buffer.byteLength(text) / 1_000_000;
  return { syncMsPerMB: syncMs / megabytes, asyncLongestBlockMs, tokens };
}

/** A second tenant's 200 KB of prose with code, after the attacker's texts. */
async function secondTenant(counterName: CounterName): Promise<number> {
  const base = await counterNamed(counterName);
  const attacker = base.scoped?.('attacker') ?? base;
  attacker.count(randomWords(1_000_000, 101));
  attacker.count(randomWords(1_000_000, 102));
  attacker.count(classTexts(CHARS)['x☃︎ repeated (the attack)']!());
  const prose = 'The agent read `config.ts` (42 lines) and found 3 issues: 漢字, naïve, 👍.\n';
  const text = prose.repeat(Math.ceil(200_000 / prose.length)) + randomWords(50_000, 103);
  const counter = base.scoped?.('victim') ?? base;
  return cpuMs(() => counter.count(text));
}

function runChild(args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], {
      env: { ...process.env, TOKEN_BENCH_CHILD: JSON.stringify(args) },
      execArgv: process.execArgv,
    });
    child.once('message', resolve);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? undefined : reject(new Error(`child ${args.join(' ')} exited ${code}`)),
    );
  });
}

const child = process.env.TOKEN_BENCH_CHILD;
if (child) {
  const [kind, counterName, className, primed] = JSON.parse(child) as [string, CounterName, string, string];
  const result =
    kind === 'tenant' ? await secondTenant(counterName) : await measure(counterName, className, primed === '1');
  process.send!(result);
  process.disconnect();
} else {
  // The previous default on the classes that show its cache; a full 1 MB of some takes minutes once primed.
  const sharedClasses = new Set(['x☃︎ repeated (the attack)', 'random six-letter words', 'random CJK ideographs']);
  const rows: Array<Record<string, unknown>> = [];
  for (const className of Object.keys(classTexts(16))) {
    const row: Record<string, unknown> = { class: className };
    for (const primed of ['0', '1']) {
      const ours = (await runChild(['class', 'default', className, primed])) as Measurement;
      row[primed === '1' ? 'primed' : 'fresh'] = ours;
      if (sharedClasses.has(className)) {
        const shared = (await runChild(['class', 'shared gpt-tokenizer', className, primed])) as Measurement;
        row[primed === '1' ? 'sharedPrimed' : 'sharedFresh'] = shared;
      }
    }
    rows.push(row);
    console.error(JSON.stringify(row));
  }
  const tenant = {
    default: (await runChild(['tenant', 'default', '', ''])) as number,
    shared: (await runChild(['tenant', 'shared gpt-tokenizer', '', ''])) as number,
  };
  const round = (value: number | null | undefined) => (value == null ? '–' : Math.round(value).toLocaleString('en'));
  const out = [
    `## Token counting under attack (${CHARS.toLocaleString('en')} characters of one class, one process per cell)`,
    '',
    '| class | default: CPU ms per MB, fresh / primed | longest event-loop wait while the store counts it, ms, fresh / primed | previous default (shared gpt-tokenizer): CPU ms per MB, fresh / primed |',
    '|---|---|---|---|',
    ...rows.map((row) => {
      const of = (key: string) => row[key] as Measurement | undefined;
      return `| ${String(row.class)} | ${round(of('fresh')?.syncMsPerMB)} / ${round(of('primed')?.syncMsPerMB)} | ${round(of('fresh')?.asyncLongestBlockMs)} / ${round(of('primed')?.asyncLongestBlockMs)} | ${round(of('sharedFresh')?.syncMsPerMB)} / ${round(of('sharedPrimed')?.syncMsPerMB)} |`;
    }),
    '',
    `A second tenant's 200 KB message after the attacker's three texts: ${round(tenant.default)} ms CPU with the default counter, ${round(tenant.shared)} ms with the previous default.`,
    '',
    `Worst longest wait: ${round(Math.max(...rows.flatMap((row) => ['fresh', 'primed'].map((key) => (row[key] as Measurement).asyncLongestBlockMs ?? 0))))} ms; worst synchronous CPU per MB: ${round(Math.max(...rows.flatMap((row) => ['fresh', 'primed'].map((key) => (row[key] as Measurement).syncMsPerMB))))} ms.`,
  ].join('\n');
  console.log(out);
  writeFileSync(new URL('./results/token-counting.md', import.meta.url), `${out}\n`);
}
