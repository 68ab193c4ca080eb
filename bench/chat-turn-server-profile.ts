// Where the server's time goes in a W8 chat turn: pg_stat_statements (track = all, so the statements inside the
// package's SQL functions and the search-vector trigger count on their own) over agent-history's turns, as W8 drives
// the chat route, on chats of one size, in ms per turn.
//
//   npx tsx bench/chat-turn-server-profile.ts             # chats of 200 messages
//   W8_PROFILE_SIZE=2000 npx tsx bench/chat-turn-server-profile.ts
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

async function main() {
  const server = await startBenchServer({ profile: true });
  try {
    await server.createDatabase('bench_w8_server_profile', { migrated: true });
    const admin = postgres(server.adminUrl('bench_w8_server_profile'), { max: 1, onnotice: () => {} });
    await admin`create extension if not exists pg_stat_statements`;
    await loadTemplates((text, params) => admin.unsafe(text, params as never[]), new MessageFactory({ seed: 42 }));
    const appUrl = server.appUrl('bench_w8_server_profile');
    const peer = agentHistoryW8({ appUrl, admin, poolSize: 10, counter: statementCounter() });
    const chats: string[] = [];
    for (let index = 0; index < CHATS; index++) chats.push(await peer.seed(SIZE));
    for (let index = 0; index < 2 * CHATS; index++) await peer.turn(chats[index % CHATS]!);
    await admin`select pg_stat_statements_reset()`;
    for (let index = 0; index < TURNS; index++) await peer.turn(chats[index % CHATS]!);
    const rows = await admin<{ query: string; calls: string; ms: number; wal: string; top: boolean }[]>`
      select left(regexp_replace(query, '\\s+', ' ', 'g'), 100) as query, calls::text,
        total_exec_time::float8 as ms, wal_bytes::text as wal, toplevel as top
      from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
      order by total_exec_time desc limit 25`;
    console.log(`chats of ${SIZE} messages, ${TURNS} turns`);
    console.log(
      '| statement | level | calls per turn | ms per turn | WAL B per turn |\n| --- | --- | --- | --- | --- |',
    );
    for (const row of rows)
      console.log(
        `| \`${row.query.replaceAll('|', '\\|')}\` | ${row.top ? 'top' : 'nested'} | ${(Number(row.calls) / TURNS).toFixed(2)} | ${(row.ms / TURNS).toFixed(3)} | ${Math.round(Number(row.wal) / TURNS)} |`,
      );
    await peer.close();
    await admin.end({ timeout: 5 });
  } finally {
    server.stop();
  }
}

runMain(main);
