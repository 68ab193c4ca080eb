-- One statement, one round trip, for a page of messages (listMessages): the function sets the tenant and switches
-- to the application role with set_config(…, true) like the append functions, then checks the thread and reads the
-- page, so a read is no longer BEGIN, a settings statement, the thread check, the query and COMMIT. PL/pgSQL plans
-- each statement when it first runs, after the role switch, so row-level security applies to the application role;
-- the settings end with the statement's own transaction. On a Citus coordinator set_config() does not reach the
-- workers: the function refuses (SQLSTATE AH001) and the store reads in a transaction with SET LOCAL instead.
-- SECURITY INVOKER and EXECUTE for PUBLIC: it grants nothing the caller could not do with set_config and a SELECT.
CREATE OR REPLACE FUNCTION "public"."agent_history_list_messages"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_before bigint,
  p_limit integer,
  p_roles text[],
  p_only_eligible boolean
) RETURNS TABLE (
  id uuid, thread_id uuid, user_id text, run_id uuid, sequence bigint, message_id text, client_request_id text,
  source_message_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts jsonb, metadata jsonb,
  context_state "public"."agent_message_context_state", exclusion_reason text, pinned boolean,
  schema_version integer, content_version integer, byte_size integer, token_count integer, token_counter_id text,
  lease_expires_at timestamptz, created_at timestamptz, updated_at timestamptz, completed_at timestamptz,
  redacted_at timestamptz, deleted_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
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
  RETURN QUERY
    SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
      m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
      m.token_count, m.token_counter_id, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
      m.redacted_at, m.deleted_at
    FROM "public"."agent_message" m
    WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.deleted_at IS NULL
      -- coalesce, not "IS NULL OR": the bound stays an index condition in a generic plan
      AND m.sequence < coalesce(p_before, 9223372036854775807)
      AND (p_roles IS NULL OR m.role::text = ANY (p_roles))
      AND (NOT p_only_eligible OR m.context_state = 'eligible')
    ORDER BY m.sequence DESC
    LIMIT p_limit;
END
$$;
--> statement-breakpoint
-- The same for loadContext: the thread, the newest valid snapshot, its summary, the newest valid summary, the newest
-- snapshot version, the tail after the snapshot's boundary (newest first, at most p_max_tail + 1) and the pinned
-- messages at or before it, one row each as (kind, data). STABLE, so every query in it reads the snapshot of the
-- calling statement: the parts come from one state of the database, as in a repeatable-read transaction.
CREATE OR REPLACE FUNCTION "public"."agent_history_load_context"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_max_tail integer
) RETURNS TABLE (kind text, data jsonb)
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_thread jsonb;
  v_snapshot jsonb;
  v_boundary bigint := 0;
  v_summary_id uuid;
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_load_context does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  -- Empty when the store is tenant-wide, so no session-level user setting can leak in.
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  SELECT to_jsonb(t) INTO v_thread FROM "public"."agent_thread" t
    WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL;
  IF v_thread IS NULL THEN
    RAISE EXCEPTION 'thread not found' USING ERRCODE = 'P0002';
  END IF;
  kind := 'thread'; data := v_thread; RETURN NEXT;
  SELECT to_jsonb(s), s.through_sequence, s.summary_id INTO v_snapshot, v_boundary, v_summary_id
    FROM "public"."agent_context_snapshot" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.stale = false
    ORDER BY s.version DESC LIMIT 1;
  IF v_snapshot IS NOT NULL THEN
    kind := 'snapshot'; data := v_snapshot; RETURN NEXT;
  END IF;
  v_boundary := coalesce(v_boundary, 0);
  RETURN QUERY SELECT 'latestSummary', to_jsonb(s) FROM "public"."agent_summary" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.stale = false
    ORDER BY s.through_sequence DESC, s.created_at DESC LIMIT 1;
  IF v_summary_id IS NOT NULL THEN
    RETURN QUERY SELECT 'summary', to_jsonb(s) FROM "public"."agent_summary" s
      WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.id = v_summary_id AND s.stale = false;
  END IF;
  RETURN QUERY SELECT 'version', to_jsonb(coalesce(max(s.version), 0)) FROM "public"."agent_context_snapshot" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id;
  RETURN QUERY SELECT 'tail', to_jsonb(x) FROM (
    SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
      m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
      m.token_count, m.token_counter_id, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
      m.redacted_at, m.deleted_at
    FROM "public"."agent_message" m
    WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence > v_boundary AND m.deleted_at IS NULL
    ORDER BY m.sequence DESC LIMIT p_max_tail + 1
  ) x;
  IF v_boundary > 0 THEN
    RETURN QUERY SELECT 'pinned', to_jsonb(x) FROM (
      SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
        m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
        m.token_count, m.token_counter_id, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
        m.redacted_at, m.deleted_at
      FROM "public"."agent_message" m
      WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence <= v_boundary AND m.pinned
        AND m.deleted_at IS NULL
    ) x;
  END IF;
END
$$;
