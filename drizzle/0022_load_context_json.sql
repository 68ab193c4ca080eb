-- The one-statement reads of 0013 (as changed by 0019 and 0021) return one row per message: loadContext as
-- to_jsonb(row), which rebuilds every message's parts as a new jsonb value before printing it (about half the
-- server's CPU for a 600-message tail), and listMessages as typed columns, which the client parses column by column.
-- These two functions return the same rows as json arrays of at most 100 messages (row_to_json's output: each
-- jsonb column printed once, unchanged, the timestamps in ISO 8601 as to_jsonb prints them), so the client parses a
-- few values with one JSON.parse each. Chunks of 100 keep each value far below the 1 GB limit of one value and the
-- client's string limit. New names, not new versions: a server running the previous release keeps calling the
-- functions of 0013/0021, which stay as they are. Same arguments, settings and refusals as those; SECURITY INVOKER
-- and EXECUTE for PUBLIC, as 0013 explains.
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
  p_only_eligible boolean
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
  RETURN QUERY SELECT json_agg(y.x) FROM (
    SELECT x, row_number() OVER () AS n FROM (
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
  ) y GROUP BY (y.n - 1) / 100;
END
$$;
