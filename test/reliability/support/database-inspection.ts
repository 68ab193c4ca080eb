import { TABLES, type TableName } from '../../support/tables.js';
import type { TestDatabase } from '../../support/test-database.js';

type Admin = TestDatabase['admin'];

/**
 * Every row of the given tenants, per table, as Postgres renders the whole row as text (every column,
 * the generated `search_vector` included), sorted. Read as the superuser, so row-level security hides nothing.
 */
export async function dumpTenants(admin: Admin, tenantIds: readonly string[]): Promise<Record<TableName, string[]>> {
  const dump = {} as Record<TableName, string[]>;
  for (const table of TABLES) {
    const rows = await admin.query<{ row: string }>(
      `select t::text as row from ${table} t where tenant_id = any($1::uuid[]) order by 1`,
      [tenantIds],
    );
    dump[table] = rows.map((row) => row.row);
  }
  return dump;
}

/** How many rows each table holds (all tenants). */
export async function countRows(admin: Admin): Promise<Record<TableName, number>> {
  const counts = {} as Record<TableName, number>;
  for (const table of TABLES) {
    const [row] = await admin.query<{ n: number }>(`select count(*)::int as n from ${table}`);
    counts[table] = Number(row!.n);
  }
  return counts;
}

/** A digest of every row of every table: any write, anywhere, changes it. */
export async function fingerprintDatabase(admin: Admin): Promise<string> {
  const parts: string[] = [];
  for (const table of TABLES) {
    const [row] = await admin.query<{ digest: string | null; n: number }>(
      `select md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as digest, count(*)::int as n from ${table} t`,
    );
    parts.push(`${table}:${row!.n}:${row!.digest}`);
  }
  return parts.join(' ');
}

/** A row of some table that contains `needle` (case-insensitive) in any column, rendered as text. */
export interface Residue {
  table: TableName;
  tenantId: string;
  text: string;
}

/**
 * Scans every column of every table (each row cast to text, `search_vector` included) for `needle`, ignoring
 * case (the search vector holds lower-cased lexemes), and also asks each message's search vector directly.
 */
export async function scanForResidue(admin: Admin, needle: string): Promise<Residue[]> {
  const residues: Residue[] = [];
  for (const table of TABLES) {
    const rows = await admin.query<{ tenant_id: string; text: string }>(
      `select tenant_id::text, t::text as text from ${table} t where strpos(lower(t::text), lower($1)) > 0`,
      [needle],
    );
    residues.push(...rows.map((row) => ({ table, tenantId: row.tenant_id, text: row.text })));
  }
  // A tool payload whole, its chunks joined: a secret cut in two by a chunk boundary is in no row on its own.
  const payloads = await admin.query<{ tenant_id: string; text: string }>(
    `select tenant_id::text, left(json, 200) as text from (select tenant_id, string_agg(content, '' order by chunk) as json
       from agent_tool_payload group by tenant_id, message_id, part, field) p where strpos(lower(json), lower($1)) > 0`,
    [needle],
  );
  residues.push(
    ...payloads.map((row) => ({ table: 'agent_tool_payload' as const, tenantId: row.tenant_id, text: row.text })),
  );
  const lexemes = await admin.query<{ tenant_id: string; text: string }>(
    `select tenant_id::text, search_vector::text as text from agent_message where search_vector @@ plainto_tsquery('simple', $1)`,
    [needle],
  );
  residues.push(
    ...lexemes.map((row) => ({
      table: 'agent_message' as const,
      tenantId: row.tenant_id,
      text: `search_vector ${row.text}`,
    })),
  );
  return residues;
}

/**
 * Rows that point at a thread that does not exist (runs, messages, summaries, snapshots), and messages that
 * point at a run that does not exist. Audit events are left out on purpose: they outlive what they record.
 */
export async function findOrphans(admin: Admin): Promise<string[]> {
  const orphans: string[] = [];
  for (const table of ['agent_run', 'agent_message', 'agent_summary', 'agent_context_snapshot'] as const) {
    const rows = await admin.query<{ id: string }>(
      `select c.id::text from ${table} c where not exists (select 1 from agent_thread t where t.tenant_id = c.tenant_id and t.id = c.thread_id)`,
    );
    orphans.push(...rows.map((row) => `${table} ${row.id}`));
  }
  const runless = await admin.query<{ id: string }>(
    `select m.id::text from agent_message m where m.run_id is not null
       and not exists (select 1 from agent_run r where r.tenant_id = m.tenant_id and r.thread_id = m.thread_id and r.id = m.run_id)`,
  );
  orphans.push(...runless.map((row) => `agent_message ${row.id} (run)`));
  return orphans;
}
