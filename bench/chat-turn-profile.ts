// Where the client CPU of one W8 chat turn goes: V8's sampling profile of agent-history's turns (the chat route, as
// W8 drives it) on chats of one size, self time summed by package (and by folder of src/), in ms per turn.
//
//   npx tsx bench/chat-turn-profile.ts             # chats of 200 messages
//   W8_PROFILE_SIZE=2000 npx tsx bench/chat-turn-profile.ts
//   W8_PROFILE_FILE=turn.cpuprofile npx tsx bench/chat-turn-profile.ts   # also writes the profile (for DevTools)
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import postgres from 'postgres';
import { MessageFactory } from './messages.js';
import { runMain } from './run-main.js';
import { startBenchServer } from './server.js';
import { loadTemplates } from './workloads/w3-agent-history.js';
import { agentHistoryW8 } from './workloads/w8-agent-history.js';
import { statementCounter } from './workloads/w8-statements.js';

const SIZE = Number(process.env.W8_PROFILE_SIZE ?? 200);
const CHATS = 4;
const TURNS = Number(process.env.W8_PROFILE_TURNS ?? 60);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

/** The bucket of a sampled frame: its package, its folder of src/, or what V8 calls it. */
function bucketOf({ callFrame: { url, functionName } }: ProfileNode): string {
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1]!;
  const inSource = /\/src\/([^/]+)\//.exec(url);
  if (inSource) return `src/${inSource[1]}`;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  return url === '' ? functionName : 'bench';
}

async function main() {
  const server = await startBenchServer();
  try {
    await server.createDatabase('bench_w8_profile', { migrated: true });
    const admin = postgres(server.adminUrl('bench_w8_profile'), { max: 1, onnotice: () => {} });
    await loadTemplates((text, params) => admin.unsafe(text, params as never[]), new MessageFactory({ seed: 42 }));
    const appUrl = server.appUrl('bench_w8_profile');
    const peer = agentHistoryW8({ appUrl, admin, poolSize: 10, counter: statementCounter() });
    const chats: string[] = [];
    for (let index = 0; index < CHATS; index++) chats.push(await peer.seed(SIZE));
    for (let index = 0; index < 2 * CHATS; index++) await peer.turn(chats[index % CHATS]!);
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    const before = process.cpuUsage();
    for (let index = 0; index < TURNS; index++) await peer.turn(chats[index % CHATS]!);
    const used = process.cpuUsage(before);
    const { profile } = await session.post('Profiler.stop');
    if (process.env.W8_PROFILE_FILE) writeFileSync(process.env.W8_PROFILE_FILE, JSON.stringify(profile));
    const nodes = new Map((profile.nodes as ProfileNode[]).map((node) => [node.id, node]));
    const buckets = new Map<string, number>();
    profile.samples!.forEach((id, index) => {
      const bucket = bucketOf(nodes.get(id)!);
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + profile.timeDeltas![index]! / 1000);
    });
    console.log(
      `chats of ${SIZE} messages, ${TURNS} turns: client CPU ${((used.user + used.system) / 1000 / TURNS).toFixed(1)} ms per turn (profiler included)`,
    );
    for (const [bucket, ms] of [...buckets].sort((a, b) => b[1] - a[1]).slice(0, 20))
      console.log(`${(ms / TURNS).toFixed(2).padStart(8)} ms  ${bucket}`);
    await peer.close();
    await admin.end({ timeout: 5 });
  } finally {
    server.stop();
  }
}

runMain(main);
