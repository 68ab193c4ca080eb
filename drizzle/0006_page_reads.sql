-- A chat window's page (`listChatMessages`): the newest p_limit messages of a thread older than p_before, newest
-- first, with only what a chat window shows of each: the UIMessage (id, role, parts, metadata, and the shape version
-- its parts were written in), its place, status and whether the model still sees it, and when it was stored. Ten
-- columns where the stored-message read returns 27, and the thread's visibility checked in the page's own query (an
-- uncorrelated EXISTS, run once); only an empty page checks the thread again, to tell a missing, deleted or invisible
-- thread (P0002) from a thread with nothing on the page; STABLE, so that both see one snapshot (a thread committed
-- between them is not an empty page of a thread that was not there). Like the other one-statement reads it is
-- SECURITY INVOKER with a pinned search_path and every name qualified, sets the tenant, the user (empty when the
-- store is tenant-wide) and the role it is given with set_config(…, true), runs with enable_sort = off (the page walks
-- the (tenant_id, thread_id, sequence) index to its LIMIT), and refuses to run on a Citus coordinator (AH001), where
-- the store reads in a transaction instead. The stored-message page reads are re-created below with the same fix of
-- their bound on the sequence.
CREATE FUNCTION "public"."agent_history_list_chat_messages"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_before bigint,
  p_limit integer,
  p_only_eligible boolean
) RETURNS TABLE (
  message_id text, role "public"."agent_message_role", parts json, metadata jsonb, schema_version integer,
  sequence bigint, status "public"."agent_message_status", context_state "public"."agent_message_context_state",
  exclusion_reason text, created_at timestamptz
) LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
DECLARE
  -- A variable, not coalesce(p_before, …) in the query: under row-level security only a leakproof comparison of the
  -- column with a plain parameter stays an index condition in a generic plan (a cached plan after five calls), and
  -- a deep page would otherwise walk every newer message of the thread.
  v_before bigint := coalesce(p_before, 9223372036854775807);
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_list_chat_messages does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  -- Empty when the store is tenant-wide, so no session-level user setting can leak in.
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  RETURN QUERY
    SELECT m.message_id, m.role, m.parts, m.metadata, m.schema_version, m.sequence, m.status, m.context_state,
      m.exclusion_reason, m.created_at
    FROM "public"."agent_message" m
    WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.deleted_at IS NULL
      AND m.sequence < v_before
      AND (NOT p_only_eligible OR m.context_state = 'eligible')
      AND EXISTS (SELECT 1 FROM "public"."agent_thread" t
        WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL)
    ORDER BY m.sequence DESC
    LIMIT p_limit;
  IF NOT FOUND THEN
    PERFORM 1 FROM "public"."agent_thread" t
      WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'thread not found' USING ERRCODE = 'P0002';
    END IF;
  END IF;
END
$$;
--> statement-breakpoint
-- The stored-message page reads (`listMessages`, typed rows and json chunks), as before but for their bound on the
-- sequence, now a variable for the same reason as above (with coalesce(p_before, …) in the query, a cached generic
-- plan read a deep page by walking every newer message of the thread), and STABLE: their thread check and their page
-- see one snapshot.
CREATE OR REPLACE FUNCTION "public"."agent_history_list_messages"(
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
) LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
DECLARE
  v_before bigint := coalesce(p_before, 9223372036854775807);
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
        AND m.sequence < v_before
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
          AND m.sequence < v_before
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
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "public"."agent_history_list_messages_json"(
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
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
DECLARE
  v_before bigint := coalesce(p_before, 9223372036854775807);
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
          AND m.sequence < v_before
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
