import { describe, expect, it } from 'vitest';
import { routingProblem } from '../support/statement-routing.js';

// The rule the contract suites apply to every statement the store sent (pg_stat_statements), on statements that
// break it in each way it can be broken, and on the store's real statements.
const FUNCTIONS = { agent_history_append_message: 'p_tenant_id', agent_history_append_messages: 'p_tenant_id' };

describe('the statement-routing rule', () => {
  it.each([
    ['select * from "agent_message" where "agent_message"."thread_id" = $1', 'without agent_message.tenant_id'],
    [
      'select * from "agent_message" join "agent_thread" on "agent_thread"."id" = "agent_message"."thread_id" where "agent_message"."tenant_id" = $1',
      'without agent_thread.tenant_id',
    ],
    ['insert into "agent_thread" ("id", "title") values ($1, $2)', 'without a tenant_id'],
    [
      'insert into "agent_context_snapshot" (tenant_id, version) select $1, max(version) from agent_context_snapshot where thread_id = $2',
      'without agent_context_snapshot.tenant_id',
    ],
    ['update "agent_thread" set "title" = $1 where "agent_thread"."id" = $2', 'without agent_thread.tenant_id'],
    ['delete from agent_summary where id = $1', 'without agent_summary.tenant_id'],
    ['select * from agent_history_other($1)', 'not one of the store'],
    ['select * from pg_class, "agent_message" where relname = $1', 'without agent_message.tenant_id'],
    ["select set_config('role', $1, true)", 'names none'],
    ['select 1', 'names none'],
    ['vacuum agent_message', 'without agent_message.tenant_id'],
    ['select * from "agent_message" where "agent_message"."tenant_id" <> $1', 'without agent_message.tenant_id'],
  ])('should refuse %s', (query, problem) => {
    expect(routingProblem(query, FUNCTIONS)).toContain(problem);
  });

  it('should refuse a function whose first parameter is not the tenant', () => {
    expect(
      routingProblem('select * from agent_history_append_message($1::uuid)', {
        agent_history_append_message: 'p_thread_id',
      }),
    ).toContain('is not the tenant');
  });

  it.each([
    'begin',
    'commit',
    'rollback',
    'savepoint s1',
    'release savepoint s1',
    'set transaction isolation level repeatable read',
    "select set_config('app.tenant_id', $1, true), set_config('role', $2, true)",
    'select b.oid, b.typarray from pg_catalog.pg_type a left join pg_catalog.pg_type b on b.oid = a.typelem',
    'select * from agent_history_append_message( $1::uuid, $2::text)',
    'select "id" from "agent_thread" where ("agent_thread"."tenant_id" = $1 and "agent_thread"."id" = $2)',
    'insert into "agent_thread" ("tenant_id", "id") values ($1, $2) returning "id"',
    'select coalesce(max("version"), $3) from "agent_context_snapshot" where ("agent_context_snapshot"."tenant_id" = $1)',
  ])('should accept %s', (query) => {
    expect(routingProblem(query, FUNCTIONS)).toBeNull();
  });
});
