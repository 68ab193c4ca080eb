-- Per-part token counts (0020 adds agent_message.part_token_counts): every write that sets token_count sets them in
-- the same statement, and every read returns them, so the context engine prunes a loaded message by subtracting.
-- 1. The single append takes them: a new function version (16 arguments). The 15-argument version of 0012 stays
--    as it is, so a server running the previous release keeps appending (its rows get NULL part counts, which the
--    engine treats as "not stored"). Counts that are not a list of non-negative integers summing to p_token_count
--    are stored as NULL: stale or inconsistent counts are never kept. Same hardening as 0009 (qualified names,
--    pinned search path, EXECUTE for the application role only). On Citus, distribute it as the README says.
CREATE FUNCTION "public"."agent_history_append_message"(
  p_tenant_id uuid,
  p_role_name text,
  p_thread_id uuid,
  p_message_id text,
  p_client_request_id text,
  p_role "public"."agent_message_role",
  p_status "public"."agent_message_status",
  p_parts jsonb,
  p_metadata jsonb,
  p_run_id uuid,
  p_byte_size integer,
  p_token_count integer,
  p_token_counter_id text,
  p_part_token_counts integer[],
  p_lease_expires_at timestamptz,
  p_pinned boolean
) RETURNS TABLE (
  inserted boolean, id uuid, sequence bigint, message_id text, client_request_id text, run_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts jsonb, metadata jsonb,
  context_state "public"."agent_message_context_state", pinned boolean, byte_size integer, token_count integer,
  token_counter_id text, part_token_counts integer[], content_version integer, lease_expires_at timestamptz,
  created_at timestamptz, updated_at timestamptz, completed_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
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
      NULL::jsonb, NULL::jsonb, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id,
      m.part_token_counts, m.content_version, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at;
END
$$;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION "public"."agent_history_append_message"(uuid, text, uuid, text, text, "public"."agent_message_role", "public"."agent_message_status", jsonb, jsonb, uuid, integer, integer, text, integer[], timestamptz, boolean) FROM PUBLIC;--> statement-breakpoint
GRANT EXECUTE ON FUNCTION "public"."agent_history_append_message"(uuid, text, uuid, text, text, "public"."agent_message_role", "public"."agent_message_status", jsonb, jsonb, uuid, integer, integer, text, integer[], timestamptz, boolean) TO "agent_history_app";--> statement-breakpoint
-- The members the role has now call it as themselves before it switches role (see 0009): an upgrade keeps working.
DO $$
DECLARE
  v_member text;
BEGIN
  FOR v_member IN SELECT m.member::regrole::text FROM pg_auth_members m WHERE m.roleid = 'agent_history_app'::regrole LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION "public"."agent_history_append_message"(uuid, text, uuid, text, text, "public"."agent_message_role", "public"."agent_message_status", jsonb, jsonb, uuid, integer, integer, text, integer[], timestamptz, boolean) TO %s', v_member);
  END LOOP;
END
$$;--> statement-breakpoint
-- 2. The batch passes each item's partTokenCounts (a JSON array, or absent: NULL) to the new version. Same signature
--    and result (CREATE OR REPLACE keeps its grants and its Citus distribution): it does not return the counts;
--    the store knows what it wrote.
CREATE OR REPLACE FUNCTION "public"."agent_history_append_messages"(
  p_tenant_id uuid,
  p_role_name text,
  p_items jsonb
) RETURNS TABLE (
  item integer, inserted boolean, id uuid, sequence bigint, message_id text, client_request_id text, run_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts jsonb, metadata jsonb,
  context_state "public"."agent_message_context_state", pinned boolean, byte_size integer, token_count integer,
  token_counter_id text, content_version integer, lease_expires_at timestamptz, created_at timestamptz,
  updated_at timestamptz, completed_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_item jsonb;
  v_index integer;
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  IF (SELECT count(DISTINCT e.value->>'threadId') FROM jsonb_array_elements(p_items) e) > 1 THEN
    PERFORM 1 FROM "public"."agent_thread" t
      WHERE t.tenant_id = p_tenant_id
        AND t.id IN (SELECT DISTINCT (e.value->>'threadId')::uuid FROM jsonb_array_elements(p_items) e)
      ORDER BY t.id
      FOR NO KEY UPDATE NOWAIT;
  END IF;
  FOR v_item, v_index IN SELECT e.value, (e.ordinality - 1)::integer FROM jsonb_array_elements(p_items) WITH ORDINALITY e ORDER BY e.ordinality LOOP
    RETURN QUERY
      SELECT v_index, a.inserted, a.id, a.sequence, a.message_id, a.client_request_id, a.run_id, a.role, a.status,
        a.parts, a.metadata, a.context_state, a.pinned, a.byte_size, a.token_count, a.token_counter_id,
        a.content_version, a.lease_expires_at, a.created_at, a.updated_at, a.completed_at
      FROM "public"."agent_history_append_message"(
        p_tenant_id, NULL, (v_item->>'threadId')::uuid, v_item->>'messageId', v_item->>'clientRequestId',
        (v_item->>'role')::"public"."agent_message_role", (v_item->>'status')::"public"."agent_message_status", v_item->'parts',
        v_item->'metadata', (v_item->>'runId')::uuid, (v_item->>'byteSize')::integer,
        (v_item->>'tokenCount')::integer, v_item->>'tokenCounterId',
        CASE WHEN jsonb_typeof(v_item->'partTokenCounts') = 'array' THEN ARRAY(
          SELECT (c.value #>> '{}')::integer FROM jsonb_array_elements(v_item->'partTokenCounts') WITH ORDINALITY c
          ORDER BY c.ordinality) END,
        (v_item->>'leaseExpiresAt')::timestamptz, (v_item->>'pinned')::boolean
      ) a;
  END LOOP;
END
$$;--> statement-breakpoint
-- 3. The one-statement reads of 0013 return the counts. agent_history_list_messages returns a row type, which
--    CREATE OR REPLACE cannot change: dropped and created again (it is not distributed on Citus, and EXECUTE stays
--    PUBLIC's), with 0019's enable_sort = off. A server of the previous release reads its columns by name and
--    ignores the new one. agent_history_load_context returns JSON: replaced in place.
DROP FUNCTION "public"."agent_history_list_messages"(uuid, text, text, uuid, bigint, integer, text[], boolean);--> statement-breakpoint
CREATE FUNCTION "public"."agent_history_list_messages"(
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
END
$$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "public"."agent_history_load_context"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_max_tail integer
) RETURNS TABLE (kind text, data jsonb)
LANGUAGE plpgsql STABLE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
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
      m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
      m.redacted_at, m.deleted_at
    FROM "public"."agent_message" m
    WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence > v_boundary AND m.deleted_at IS NULL
    ORDER BY m.sequence DESC LIMIT p_max_tail + 1
  ) x;
  IF v_boundary > 0 THEN
    RETURN QUERY SELECT 'pinned', to_jsonb(x) FROM (
      SELECT m.id, m.thread_id, m.user_id, m.run_id, m.sequence, m.message_id, m.client_request_id, m.source_message_id, m.role, m.status, m.parts,
        m.metadata, m.context_state, m.exclusion_reason, m.pinned, m.schema_version, m.content_version, m.byte_size,
        m.token_count, m.token_counter_id, m.part_token_counts, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at,
        m.redacted_at, m.deleted_at
      FROM "public"."agent_message" m
      WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence <= v_boundary AND m.pinned
        AND m.deleted_at IS NULL
    ) x;
  END IF;
END
$$;
