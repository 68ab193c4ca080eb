-- What drizzle-kit cannot generate from the schema, after the tables.
-- Row-level security is forced: without it the tables' owner would bypass the tenant policies. Every store
-- transaction switches to the application role, which these grants give what the store does and nothing more: the audit
-- log is insert-only, the stream chunk log and the tool payloads are never updated.
ALTER TABLE "public"."agent_thread" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "public"."agent_run" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "public"."agent_message" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "public"."agent_summary" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "public"."agent_context_snapshot" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "public"."agent_audit_event" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "public"."agent_stream_chunk" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "public"."agent_tool_payload" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
GRANT USAGE ON SCHEMA "public" TO "agent_history_app";--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON "public"."agent_thread", "public"."agent_run", "public"."agent_message", "public"."agent_summary", "public"."agent_context_snapshot" TO "agent_history_app";--> statement-breakpoint
GRANT SELECT, INSERT ON "public"."agent_audit_event" TO "agent_history_app";--> statement-breakpoint
GRANT SELECT, INSERT, DELETE ON "public"."agent_stream_chunk", "public"."agent_tool_payload" TO "agent_history_app";--> statement-breakpoint
-- The functions below are SECURITY INVOKER with a pinned search_path and every name qualified (a temporary table
-- named like a store table cannot capture them). Each sets the tenant (and the user) and switches to the role it is
-- given with set_config(…, true), exactly as a store transaction does, so EXECUTE stays PUBLIC's (Postgres's
-- default): a caller that is not a member of the role cannot switch to it, and a caller that runs them as itself
-- gets only what its own grants and the policies allow.
--
-- Append one message in one statement (one round trip, autocommit): return the stored row when the message id or
-- client request id is already there (idempotent retry), otherwise take the next sequence from the thread row and
-- insert, atomically, copying the thread's user. Two identical requests racing: the loser's INSERT hits the unique
-- index, the whole statement rolls back (the sequence bump with it, so no gap) and the caller reads the winner's
-- row. Per-part token counts that are not a list of non-negative integers summing to p_token_count are stored as
-- NULL: stale or inconsistent counts are never kept. The parts are json, stored as the text given. With
-- p_defer_search (a store with `search: 'deferred'` or `false`) the row is stored without a search vector; with
-- p_user_id (a user-scoped store) the policies see only that user's threads. Both settings are made here, where the
-- function runs (on Citus, on the tenant's worker), for the rest of the transaction.
CREATE FUNCTION "public"."agent_history_append_message"(
  p_tenant_id uuid,
  p_role_name text,
  p_thread_id uuid,
  p_message_id text,
  p_client_request_id text,
  p_role "public"."agent_message_role",
  p_status "public"."agent_message_status",
  p_parts json,
  p_metadata jsonb,
  p_run_id uuid,
  p_byte_size integer,
  p_token_count integer,
  p_token_counter_id text,
  p_part_token_counts integer[],
  p_lease_expires_at timestamptz,
  p_pinned boolean,
  p_defer_search boolean DEFAULT false,
  p_user_id text DEFAULT NULL
) RETURNS TABLE (
  inserted boolean, id uuid, sequence bigint, message_id text, client_request_id text, run_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts json, metadata jsonb,
  context_state "public"."agent_message_context_state", pinned boolean, byte_size integer, token_count integer,
  token_counter_id text, part_token_counts integer[], content_version integer, lease_expires_at timestamptz,
  created_at timestamptz, updated_at timestamptz, completed_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  -- A user-scoped store's user (the policies then hide another user's thread). Without one, a scope the caller's
  -- transaction set stays in force: an append never widens it.
  IF p_user_id IS NOT NULL THEN
    PERFORM set_config('app.user_id', p_user_id, true);
  END IF;
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  IF p_defer_search THEN
    PERFORM set_config('agent_history.search', 'deferred', true);
  END IF;
  RETURN QUERY
    SELECT false, m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status, m.parts,
      m.metadata, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.part_token_counts,
      m.content_version, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at
    FROM "public"."agent_message" m
    WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id
      AND (m.message_id = p_message_id OR (p_client_request_id IS NOT NULL AND m.client_request_id = p_client_request_id))
    ORDER BY m.sequence
    LIMIT 1;
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
    WITH slot AS (
      UPDATE "public"."agent_thread" t
      SET next_sequence = t.next_sequence + 1, last_message_at = now(), updated_at = now()
      WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL
      RETURNING t.next_sequence, t.user_id
    )
    INSERT INTO "public"."agent_message" AS m (
      tenant_id, thread_id, user_id, sequence, message_id, client_request_id, run_id, role, status, parts, metadata,
      pinned, byte_size, token_count, token_counter_id, part_token_counts, lease_expires_at, completed_at
    )
    SELECT p_tenant_id, p_thread_id, slot.user_id, slot.next_sequence, p_message_id, p_client_request_id, p_run_id, p_role,
      p_status, p_parts, p_metadata, p_pinned, p_byte_size, p_token_count, p_token_counter_id,
      CASE WHEN p_token_count IS NOT NULL AND array_position(p_part_token_counts, NULL) IS NULL
        AND 0 <= ALL (p_part_token_counts)
        AND (SELECT coalesce(sum(c), 0) FROM unnest(p_part_token_counts) c) = p_token_count
      THEN p_part_token_counts END,
      p_lease_expires_at, CASE WHEN p_status IN ('completed', 'failed', 'cancelled') THEN now() END
    FROM slot
    RETURNING true, m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status,
      NULL::json, NULL::jsonb, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id,
      m.part_token_counts, m.content_version, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at;
END
$$;--> statement-breakpoint
-- Append a batch (write combining): one idempotency look-up for all items, one thread-row UPDATE per thread, one
-- INSERT of all new rows. Rows are tagged with the item's index; a retried message or request returns the row stored
-- first (inserted false, with its parts); no row for an item whose thread is missing or deleted; sequences in item
-- order per thread. A batch that repeats a message id or client request id of the same thread within itself (where
-- whether an item is new depends on the items before it) calls the single append item by item, with the same
-- expressions, so the same JSON means the same on both paths. A one-thread batch waits for its thread before the
-- look-up, so it sees what the writer it waited for committed.
-- The items' parts come apart from the items, as one json array in item order (p_parts' element i is item i's
-- parts; past its end, null: an item that would be inserted then fails its NOT NULL), so that they are read once,
-- as text, never converted to jsonb and printed back: p_items, small, is read as jsonb as often as needed.
CREATE FUNCTION "public"."agent_history_append_messages"(
  p_tenant_id uuid,
  p_role_name text,
  p_items jsonb,
  p_parts json,
  p_defer_search boolean DEFAULT false,
  p_user_id text DEFAULT NULL
) RETURNS TABLE (
  item integer, inserted boolean, id uuid, sequence bigint, message_id text, client_request_id text, run_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts json, metadata jsonb,
  context_state "public"."agent_message_context_state", pinned boolean, byte_size integer, token_count integer,
  token_counter_id text, content_version integer, lease_expires_at timestamptz, created_at timestamptz,
  updated_at timestamptz, completed_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_item jsonb;
  v_parts json;
  v_index integer;
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  -- A user-scoped store's user (the policies then hide another user's thread). Without one, a scope the caller's
  -- transaction set stays in force: an append never widens it.
  IF p_user_id IS NOT NULL THEN
    PERFORM set_config('app.user_id', p_user_id, true);
  END IF;
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  IF p_defer_search THEN
    PERFORM set_config('agent_history.search', 'deferred', true);
  END IF;
  IF (SELECT count(DISTINCT (e.value->>'threadId')::uuid) FROM jsonb_array_elements(p_items) e) > 1 THEN
    PERFORM 1 FROM "public"."agent_thread" t
      WHERE t.tenant_id = p_tenant_id
        AND t.id IN (SELECT DISTINCT (e.value->>'threadId')::uuid FROM jsonb_array_elements(p_items) e)
      ORDER BY t.id
      FOR NO KEY UPDATE NOWAIT;
  ELSIF current_setting('transaction_isolation') = 'read committed' THEN
    -- One thread: a writer holding it is waited for here, in a statement of its own, so the look-up below (one
    -- snapshot for every item) sees what it committed, as the loop's look-ups after its first wait do; without it a
    -- message that writer stored and this batch retries hit the unique index instead of being returned. (Under
    -- repeatable read the snapshot is the transaction's: the wait would only add a serialization failure.)
    PERFORM 1 FROM "public"."agent_thread" t
      WHERE t.tenant_id = p_tenant_id
        AND t.id IN (SELECT (e.value->>'threadId')::uuid FROM jsonb_array_elements(p_items) e)
      FOR NO KEY UPDATE;
  END IF;
  IF NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(p_items) e
    GROUP BY (e.value->>'threadId')::uuid, e.value->>'messageId' HAVING count(*) > 1
  ) AND NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(p_items) e
    WHERE e.value->>'clientRequestId' IS NOT NULL
    GROUP BY (e.value->>'threadId')::uuid, e.value->>'clientRequestId' HAVING count(*) > 1
  ) THEN
    -- Every item is independent of the others: new exactly when no stored row has its message id or request id.
    RETURN QUERY
      WITH items AS (
        -- Each argument read with the expression the item-by-item path passes to the single append, so an item's JSON means
        -- the same on both paths (a thread id in any spelling the uuid type reads, a JSON null kept as JSON, part
        -- counts that are not a list of integers).
        SELECT (e.ordinality - 1)::integer AS item, (e.value->>'threadId')::uuid AS "threadId",
          e.value->>'messageId' AS "messageId", e.value->>'clientRequestId' AS "clientRequestId",
          (e.value->>'role')::"public"."agent_message_role" AS "role",
          (e.value->>'status')::"public"."agent_message_status" AS "status", e.parts AS "parts",
          e.value->'metadata' AS "metadata", (e.value->>'runId')::uuid AS "runId",
          (e.value->>'byteSize')::integer AS "byteSize", (e.value->>'tokenCount')::integer AS "tokenCount",
          e.value->>'tokenCounterId' AS "tokenCounterId",
          CASE WHEN jsonb_typeof(e.value->'partTokenCounts') = 'array' THEN ARRAY(
            SELECT (c.value #>> '{}')::integer FROM jsonb_array_elements(e.value->'partTokenCounts') WITH ORDINALITY c
            ORDER BY c.ordinality) END AS "partTokenCounts",
          (e.value->>'leaseExpiresAt')::timestamptz AS "leaseExpiresAt", (e.value->>'pinned')::boolean AS "pinned"
        FROM ROWS FROM (jsonb_array_elements(p_items), json_array_elements(p_parts)) WITH ORDINALITY e(value, parts, ordinality)
        WHERE e.value IS NOT NULL
      ),
      found AS (
        SELECT i.item, s.*
        FROM items i
        CROSS JOIN LATERAL (
          SELECT m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status, m.parts,
            m.metadata, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.content_version,
            m.lease_expires_at, m.created_at, m.updated_at, m.completed_at
          FROM "public"."agent_message" m
          WHERE m.tenant_id = p_tenant_id AND m.thread_id = i."threadId"
            AND (m.message_id = i."messageId"
              OR (i."clientRequestId" IS NOT NULL AND m.client_request_id = i."clientRequestId"))
          ORDER BY m.sequence
          LIMIT 1
        ) s
      ),
      fresh AS (
        SELECT i.*, row_number() OVER (PARTITION BY i."threadId" ORDER BY i.item) AS rank,
          count(*) OVER (PARTITION BY i."threadId") AS n
        FROM items i
        WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.item = i.item)
      ),
      slot AS (
        UPDATE "public"."agent_thread" t
        SET next_sequence = t.next_sequence + c.n, last_message_at = now(), updated_at = now()
        FROM (SELECT DISTINCT f."threadId", f.n FROM fresh f) c
        WHERE t.tenant_id = p_tenant_id AND t.id = c."threadId" AND t.deleted_at IS NULL
        RETURNING t.id AS thread_id, t.next_sequence - c.n AS before_sequence, t.user_id
      ),
      added AS (
        INSERT INTO "public"."agent_message" AS m (
          tenant_id, thread_id, user_id, sequence, message_id, client_request_id, run_id, role, status, parts,
          metadata, pinned, byte_size, token_count, token_counter_id, part_token_counts, lease_expires_at,
          completed_at
        )
        SELECT p_tenant_id, f."threadId", s.user_id, s.before_sequence + f.rank, f."messageId", f."clientRequestId",
          f."runId", f."role", f."status", f."parts", f."metadata", f."pinned", f."byteSize", f."tokenCount",
          f."tokenCounterId",
          CASE WHEN f."tokenCount" IS NOT NULL AND array_position(f."partTokenCounts", NULL) IS NULL
            AND 0 <= ALL (f."partTokenCounts")
            AND (SELECT coalesce(sum(c), 0) FROM unnest(f."partTokenCounts") c) = f."tokenCount"
          THEN f."partTokenCounts" END,
          f."leaseExpiresAt", CASE WHEN f."status" IN ('completed', 'failed', 'cancelled') THEN now() END
        FROM fresh f JOIN slot s ON s.thread_id = f."threadId"
        ORDER BY f.item
        RETURNING m.thread_id, m.message_id, m.id, m.sequence, m.client_request_id, m.run_id, m.role, m.status,
          m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.content_version,
          m.lease_expires_at, m.created_at, m.updated_at, m.completed_at
      )
      SELECT f.item, false, f.id, f.sequence, f.message_id, f.client_request_id, f.run_id, f.role, f.status, f.parts,
        f.metadata, f.context_state, f.pinned, f.byte_size, f.token_count, f.token_counter_id, f.content_version,
        f.lease_expires_at, f.created_at, f.updated_at, f.completed_at
      FROM found f
      UNION ALL
      SELECT i.item, true, a.id, a.sequence, a.message_id, a.client_request_id, a.run_id, a.role, a.status,
        NULL::json, NULL::jsonb, a.context_state, a.pinned, a.byte_size, a.token_count, a.token_counter_id,
        a.content_version, a.lease_expires_at, a.created_at, a.updated_at, a.completed_at
      FROM added a JOIN fresh i ON i."threadId" = a.thread_id AND i."messageId" = a.message_id;
    RETURN;
  END IF;
  FOR v_item, v_parts, v_index IN
    SELECT e.value, e.parts, (e.ordinality - 1)::integer
    FROM ROWS FROM (jsonb_array_elements(p_items), json_array_elements(p_parts)) WITH ORDINALITY e(value, parts, ordinality)
    WHERE e.value IS NOT NULL ORDER BY e.ordinality
  LOOP
    RETURN QUERY
      SELECT v_index, a.inserted, a.id, a.sequence, a.message_id, a.client_request_id, a.run_id, a.role, a.status,
        a.parts, a.metadata, a.context_state, a.pinned, a.byte_size, a.token_count, a.token_counter_id,
        a.content_version, a.lease_expires_at, a.created_at, a.updated_at, a.completed_at
      FROM "public"."agent_history_append_message"(
        p_tenant_id, NULL, (v_item->>'threadId')::uuid, v_item->>'messageId', v_item->>'clientRequestId',
        (v_item->>'role')::"public"."agent_message_role", (v_item->>'status')::"public"."agent_message_status", v_parts,
        v_item->'metadata', (v_item->>'runId')::uuid, (v_item->>'byteSize')::integer,
        (v_item->>'tokenCount')::integer, v_item->>'tokenCounterId',
        CASE WHEN jsonb_typeof(v_item->'partTokenCounts') = 'array' THEN ARRAY(
          SELECT (c.value #>> '{}')::integer FROM jsonb_array_elements(v_item->'partTokenCounts') WITH ORDINALITY c
          ORDER BY c.ordinality) END,
        (v_item->>'leaseExpiresAt')::timestamptz, (v_item->>'pinned')::boolean, p_defer_search, p_user_id
      ) a;
  END LOOP;
END
$$;
--> statement-breakpoint
-- The one-statement reads: listMessages and loadContext in one statement and one round trip, where a transaction
-- would take five. Each runs with enable_sort = off (for its own run only): the user-scope clause of the policy gets
-- the planner's default selectivity, so on a table where one thread holds most rows the planner would otherwise
-- scan and sort the whole thread instead of walking the (tenant_id, thread_id, sequence) index to the page's LIMIT.
-- The setting only makes a sort look expensive: a query with no other way to its order still sorts. A thread that is
-- missing, deleted or invisible raises P0002; on a Citus coordinator they refuse to run (AH001) and the store reads
-- in a transaction instead.
CREATE FUNCTION "public"."agent_history_list_messages"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_before bigint,
  p_limit integer,
  p_roles text[],
  p_only_eligible boolean,
  p_max_bytes bigint DEFAULT NULL
) RETURNS TABLE (
  id uuid, thread_id uuid, user_id text, run_id uuid, sequence bigint, message_id text, client_request_id text,
  source_message_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts json, metadata jsonb,
  context_state "public"."agent_message_context_state", exclusion_reason text, pinned boolean,
  schema_version integer, content_version integer, byte_size integer, token_count integer, token_counter_id text,
  part_token_counts integer[],
  lease_expires_at timestamptz, created_at timestamptz, updated_at timestamptz, completed_at timestamptz,
  redacted_at timestamptz, deleted_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_list_messages does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  -- Empty when the store is tenant-wide, so no session-level user setting can leak in.
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  PERFORM 1 FROM "public"."agent_thread" t
    WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'thread not found' USING ERRCODE = 'P0002';
  END IF;
  IF p_max_bytes IS NULL THEN
    RETURN QUERY
      SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
        m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
        m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
        m.redacted_at, m.deleted_at
      FROM "public"."agent_message" m
      WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.deleted_at IS NULL
        -- coalesce, not "IS NULL OR": the bound stays an index condition in a generic plan
        AND m.sequence < coalesce(p_before, 9223372036854775807)
        AND (p_roles IS NULL OR m.role::text = ANY (p_roles))
        AND (NOT p_only_eligible OR m.context_state = 'eligible')
      ORDER BY m.sequence DESC
      LIMIT p_limit;
    RETURN;
  END IF;
  -- Within a byte budget: the newest row, then each row while the page's byte_size sum stays within p_max_bytes,
  -- then the first row past it (so the caller knows there is more); rows past that are never printed.
  RETURN QUERY
    SELECT w.id, w.thread_id, w.user_id, w.run_id, w.sequence, w.message_id, w.client_request_id, w.source_message_id, w.role, w.status, w.parts,
      w.metadata, w.context_state, w.exclusion_reason, w.pinned, w.schema_version, w.content_version, w.byte_size,
      w.token_count, w.token_counter_id, w.part_token_counts, w.lease_expires_at, w.created_at, w.updated_at, w.completed_at,
      w.redacted_at, w.deleted_at
    FROM (
      SELECT b.*, row_number() OVER newest AS r, sum(b.byte_size) OVER newest - b.byte_size AS newer_bytes
      FROM (
        SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
          m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
          m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
          m.redacted_at, m.deleted_at
        FROM "public"."agent_message" m
        WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.deleted_at IS NULL
          AND m.sequence < coalesce(p_before, 9223372036854775807)
          AND (p_roles IS NULL OR m.role::text = ANY (p_roles))
          AND (NOT p_only_eligible OR m.context_state = 'eligible')
        ORDER BY m.sequence DESC
        LIMIT p_limit
      ) b
      WINDOW newest AS (ORDER BY b.sequence DESC ROWS UNBOUNDED PRECEDING)
    ) w
    WHERE w.r <= 2 OR w.newer_bytes <= p_max_bytes
    ORDER BY w.sequence DESC;
END
$$;--> statement-breakpoint
-- The same reads returning their messages as json arrays of at most 100 rows (row_to_json's output: the parts as
-- stored, each jsonb column printed once, unchanged, the timestamps in ISO 8601), which the client parses with one
-- JSON.parse each. Chunks of
-- 100 keep each value far below the 1 GB limit of one value and the client's string limit.
CREATE FUNCTION "public"."agent_history_load_context_json"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_max_tail integer
) RETURNS TABLE (kind text, data json)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
DECLARE
  v_thread json;
  v_snapshot json;
  v_boundary bigint := 0;
  v_summary_id uuid;
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_load_context_json does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  -- Empty when the store is tenant-wide, so no session-level user setting can leak in.
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  SELECT row_to_json(t) INTO v_thread FROM "public"."agent_thread" t
    WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL;
  IF v_thread IS NULL THEN
    RAISE EXCEPTION 'thread not found' USING ERRCODE = 'P0002';
  END IF;
  kind := 'thread'; data := v_thread; RETURN NEXT;
  SELECT row_to_json(s), s.through_sequence, s.summary_id INTO v_snapshot, v_boundary, v_summary_id
    FROM "public"."agent_context_snapshot" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.stale = false
    ORDER BY s.version DESC LIMIT 1;
  IF v_snapshot IS NOT NULL THEN
    kind := 'snapshot'; data := v_snapshot; RETURN NEXT;
  END IF;
  v_boundary := coalesce(v_boundary, 0);
  RETURN QUERY SELECT 'latestSummary', row_to_json(s) FROM "public"."agent_summary" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.stale = false
    ORDER BY s.through_sequence DESC, s.created_at DESC LIMIT 1;
  IF v_summary_id IS NOT NULL THEN
    RETURN QUERY SELECT 'summary', row_to_json(s) FROM "public"."agent_summary" s
      WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.id = v_summary_id AND s.stale = false;
  END IF;
  RETURN QUERY SELECT 'version', to_json(coalesce(max(s.version), 0)) FROM "public"."agent_context_snapshot" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id;
  -- The newest p_max_tail + 1 first (the index walked backwards to the LIMIT), then numbered and cut in chunks.
  RETURN QUERY SELECT 'tail', json_agg(y.x) FROM (
    SELECT x, row_number() OVER () AS n FROM (
      SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
        m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
        m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
        m.redacted_at, m.deleted_at
      FROM "public"."agent_message" m
      WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence > v_boundary AND m.deleted_at IS NULL
      ORDER BY m.sequence DESC LIMIT p_max_tail + 1
    ) x
  ) y GROUP BY (y.n - 1) / 100;
  IF v_boundary > 0 THEN
    RETURN QUERY SELECT 'pinned', json_agg(y.x) FROM (
      SELECT x, row_number() OVER () AS n FROM (
        SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
          m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
          m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
          m.redacted_at, m.deleted_at
        FROM "public"."agent_message" m
        WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence <= v_boundary AND m.pinned
          AND m.deleted_at IS NULL
      ) x
    ) y GROUP BY (y.n - 1) / 100;
  END IF;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "public"."agent_history_list_messages_json"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_before bigint,
  p_limit integer,
  p_roles text[],
  p_only_eligible boolean,
  p_max_bytes bigint DEFAULT NULL
) RETURNS TABLE (data json)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_list_messages_json does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  -- Empty when the store is tenant-wide, so no session-level user setting can leak in.
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  PERFORM 1 FROM "public"."agent_thread" t
    WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'thread not found' USING ERRCODE = 'P0002';
  END IF;
  -- Within a byte budget (p_max_bytes), as the typed read above: the rows past the first one over it are left out.
  RETURN QUERY SELECT json_agg(y.x) FROM (
    SELECT w.x, row_number() OVER () AS n FROM (
      SELECT x, row_number() OVER newest AS r, sum((x).byte_size) OVER newest - (x).byte_size AS newer_bytes FROM (
        SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
          m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
          m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
          m.redacted_at, m.deleted_at
        FROM "public"."agent_message" m
        WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.deleted_at IS NULL
          -- coalesce, not "IS NULL OR": the bound stays an index condition in a generic plan
          AND m.sequence < coalesce(p_before, 9223372036854775807)
          AND (p_roles IS NULL OR m.role::text = ANY (p_roles))
          AND (NOT p_only_eligible OR m.context_state = 'eligible')
        ORDER BY m.sequence DESC
        LIMIT p_limit
      ) x
      WINDOW newest AS (ORDER BY (x).sequence DESC ROWS UNBOUNDED PRECEDING)
    ) w
    WHERE p_max_bytes IS NULL OR w.r <= 2 OR w.newer_bytes <= p_max_bytes
  ) y GROUP BY (y.n - 1) / 100;
END
$$;
--> statement-breakpoint
-- The search vector of a message: set when a row is inserted or its parts change (a redaction, a stream's final
-- parts). A store created with `search: 'deferred'` or `false` sets `agent_history.search` to 'deferred' for its
-- append's transaction (the append functions' p_defer_search), and writes `search_version` -1 in its checkpoints' and
-- finalization's UPDATE (a value, not a setting, so that it reaches a Citus worker): the row is then stored with a
-- null vector, which `searchMessages` computes on the fly and `indexPendingMessages` fills in batches. Any other
-- writer (an update of the parts, another store, psql) gets the vector of the current parts, and a vector written directly is replaced by the one of the
-- parts (only clearing it, for a rebuild, is kept): a vector is always the current parts' or null, never a stale or
-- forged one. Text parts only; past 250,000 bytes of text, the first 100,000 characters. The parts are read as jsonb
-- (the same vector whatever their spacing or key order); an update that leaves their text as it was keeps a null vector.
-- json takes a \u0000 escape that jsonb refuses: a deferred row holding one would fail every later reading of its parts
-- as jsonb (a search, its indexing), so it is refused here too, by the jsonb cast, when its text has that escape.
-- `search_version` names the extraction that made the vector (`agent_history_search_version()`), null with it; like
-- the vector it is the trigger's alone. A release that changes the extraction raises the version, and
-- `rebuildDerivedData` recomputes every vector of another one.
CREATE FUNCTION "public"."agent_history_search_version"() RETURNS smallint
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT 1::smallint
$$;--> statement-breakpoint
CREATE FUNCTION "public"."agent_history_message_search_vector"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  texts jsonb;
BEGIN
  IF current_setting('agent_history.search', true) = 'deferred' OR NEW.search_version = -1 THEN
    IF strpos(NEW.parts::text, E'\\u0000') > 0 THEN
      PERFORM NEW.parts::jsonb;
    END IF;
    NEW.search_vector := NULL;
    NEW.search_version := NULL;
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.search_vector IS NULL AND NEW.parts::text IS NOT DISTINCT FROM OLD.parts::text THEN
    NEW.search_version := NULL;
    RETURN NEW;
  END IF;
  NEW.search_version := "public"."agent_history_search_version"();
  texts := jsonb_path_query_array(NEW.parts::jsonb, 'strict $[*] ? (@.type == "text").text');
  IF octet_length(texts::text) <= 250000 THEN
    NEW.search_vector := to_tsvector('simple'::regconfig, texts);
  ELSE
    NEW.search_vector := to_tsvector('simple'::regconfig,
      left(replace(replace(replace(texts::text, '\n', ' '), '\r', ' '), '\t', ' '), 100000));
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER agent_message_search_vector BEFORE INSERT OR UPDATE OF parts, search_vector, search_version ON "public"."agent_message"
FOR EACH ROW EXECUTE FUNCTION "public"."agent_history_message_search_vector"();
--> statement-breakpoint
-- `content_version` is a version the database keeps: every UPDATE that changes a message's parts raises it by at
-- least one, whoever writes (the store's checkpoint, finalize, reopen, redaction or migration, another store, psql),
-- and no UPDATE lowers it. An explicit value is kept when it is higher (a redaction's `content_version + 1` stays
-- exactly one higher). So a copy of a message's parts, a summary or a converted form, keyed by its row and
-- `content_version`, is current exactly while the version is. Parts are compared as their text, which json keeps as
-- written: writing byte-identical parts raises nothing; the same value in other text (another key order or spacing)
-- raises it, as readers now get other text. The trigger sets only the row's own column (safe on Citus shards), and
-- its order against the search vector trigger does not matter: that one reads the parts and writes only
-- `search_vector`.
CREATE FUNCTION "public"."agent_history_message_content_version"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NEW.parts::text IS DISTINCT FROM OLD.parts::text THEN
    NEW.content_version := greatest(NEW.content_version, OLD.content_version + 1);
  ELSE
    NEW.content_version := greatest(NEW.content_version, OLD.content_version);
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER agent_message_content_version BEFORE UPDATE OF parts, content_version ON "public"."agent_message"
FOR EACH ROW EXECUTE FUNCTION "public"."agent_history_message_content_version"();
