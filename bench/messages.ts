// Deterministic generator of realistic AI SDK `UIMessage`-shaped chat messages (ported from peerbench's
// src/messages.mjs, so payloads are byte-identical to the reference figures):
//
//   { id, role: 'user' | 'assistant', parts: UIMessagePart[] }
//
// - user messages: one text part, 200–2000 chars
// - assistant messages: 'step-start' + text part(s) (200–2000 chars); with probability `toolProbability` one
//   or two tool parts `{ type: 'tool-<name>', toolCallId, state: 'output-available', input, output }` whose
//   JSON input + output is 1–20 KB (log-uniform, so most are a few KB and a few are large).
//
// Bodies come from a fixed pool of templates built once from a seeded PRNG, so every peer stores the same
// payloads and generation is not on the hot path: `make()` assigns a fresh id and tags the content with it.
import { randomUUID } from 'node:crypto';

export type BenchPart = { type: string; [key: string]: unknown };
export interface BenchMessage {
  id: string;
  role: 'user' | 'assistant';
  parts: BenchPart[];
}

export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'the a of to and in is it that for on with as this be are was by at from or an have not ' +
  'database message thread agent memory tool call result postgres index query latency user ' +
  'assistant model token context window stream append load order sequence commit transaction ' +
  'concurrency lock row page cache vacuum json schema table insert select update delete ' +
  'function return value error retry timeout request response server client network ' +
  'summary analysis report customer invoice order product price shipping weather forecast ' +
  'please could you help me find explain why how when where which would should we they ' +
  'because however therefore although meanwhile finally first second next then also only'
).split(/\s+/);

function text(random: () => number, minChars: number, maxChars: number): string {
  const target = Math.floor(minChars + random() * (maxChars - minChars));
  const words: string[] = [];
  let length = 0;
  let sentence = 0;
  while (length < target) {
    let word = WORDS[Math.floor(random() * WORDS.length)]!;
    if (sentence === 0) word = word[0]!.toUpperCase() + word.slice(1);
    sentence++;
    if (sentence > 8 && random() < 0.15) {
      word += '.';
      sentence = 0;
    }
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, target);
}

function jsonBlob(random: () => number, targetBytes: number) {
  const rows: unknown[] = [];
  let size = 2;
  let index = 0;
  while (size < targetBytes) {
    const row = {
      id: `rec_${index++}_${Math.floor(random() * 1e9).toString(36)}`,
      title: text(random, 20, 60),
      score: Math.round(random() * 10000) / 100,
      tags: [WORDS[Math.floor(random() * WORDS.length)], WORDS[Math.floor(random() * WORDS.length)]],
      snippet: text(random, 60, 240),
    };
    size += JSON.stringify(row).length + 1;
    rows.push(row);
  }
  return rows;
}

const TOOLS = ['searchDocs', 'getWeather', 'runSql', 'fetchUrl', 'readFile'];

export function buildTemplates({ count = 256, seed = 42, toolProbability = 0.35 } = {}): Omit<BenchMessage, 'id'>[] {
  const random = mulberry32(seed);
  const templates: Omit<BenchMessage, 'id'>[] = [];
  for (let index = 0; index < count; index++) {
    if (index % 2 === 0) {
      templates.push({ role: 'user', parts: [{ type: 'text', text: text(random, 200, 2000) }] });
      continue;
    }
    const parts: BenchPart[] = [{ type: 'step-start' }];
    if (random() < toolProbability) {
      const toolCount = random() < 0.75 ? 1 : 2;
      for (let tool = 0; tool < toolCount; tool++) {
        // total tool JSON size log-uniform in [1 KB, 20 KB]; ~20 % of it input, the rest output
        const total = Math.exp(Math.log(1024) + random() * (Math.log(20480) - Math.log(1024)));
        const toolName = TOOLS[Math.floor(random() * TOOLS.length)]!;
        parts.push({
          type: `tool-${toolName}`,
          toolCallId: `call_${index}_${tool}_${Math.floor(random() * 1e12).toString(36)}`,
          state: 'output-available',
          input: { query: text(random, 20, 120), options: jsonBlob(random, total * 0.2) },
          output: { ok: true, items: jsonBlob(random, total * 0.8) },
        });
      }
      parts.push({ type: 'step-start' });
    }
    parts.push({ type: 'text', text: text(random, 200, 2000) });
    templates.push({ role: 'assistant', parts });
  }
  return templates;
}

/**
 * The template's parts with a per-message tag in every text and tool input / output (8 characters each), so no
 * two messages carry the same content: real conversations do not repeat, and the store caches the token counts
 * of long texts, which a 256-template pool would otherwise hit on every append.
 */
function uniqueParts(parts: BenchPart[], tag: string): BenchPart[] {
  return parts.map((part) => {
    if (part.type === 'text') return { ...part, text: `${tag} ${part.text as string}` };
    if (part.type.startsWith('tool-'))
      return { ...part, input: { ...(part.input as object), tag }, output: { ...(part.output as object), tag } };
    return part;
  });
}

/** Hands out message #k of a thread: user and assistant alternate, bodies cycle through the template pool. */
export class MessageFactory {
  readonly templates: Omit<BenchMessage, 'id'>[];
  readonly partsBytes: number[];
  constructor(options?: { count?: number; seed?: number; toolProbability?: number }) {
    this.templates = buildTemplates(options);
    this.partsBytes = this.templates.map((template) => JSON.stringify(uniqueParts(template.parts, '00000000')).length);
  }
  make(k: number): BenchMessage {
    const template = this.templates[k % this.templates.length]!;
    const id = randomUUID();
    return { id, role: template.role, parts: uniqueParts(template.parts, id.slice(0, 8)) };
  }
  bytesOf(k: number): number {
    return this.partsBytes[k % this.partsBytes.length]!;
  }
  stats() {
    const sorted = [...this.partsBytes].sort((a, b) => a - b);
    const mean = sorted.reduce((sum, size) => sum + size, 0) / sorted.length;
    return {
      templates: sorted.length,
      meanPartsBytes: Math.round(mean),
      p50PartsBytes: sorted[Math.floor(sorted.length * 0.5)],
      p95PartsBytes: sorted[Math.floor(sorted.length * 0.95)],
      maxPartsBytes: sorted[sorted.length - 1],
      withToolParts: this.templates.filter((template) => template.parts.some((part) => part.type.startsWith('tool-')))
        .length,
    };
  }
}
