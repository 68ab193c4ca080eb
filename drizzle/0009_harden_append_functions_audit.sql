-- Defence in depth (see 0002 and 0004 for what the functions do; their bodies are unchanged but for the names).
-- 1. Every table, type and function is named with its schema and the search path is pinned to pg_catalog, then
--    pg_temp last: a temporary table named agent_thread or agent_message on a pooled connection cannot capture an
--    append. CREATE OR REPLACE, never DROP: on Citus a dropped function loses its distribution.
CREATE OR REPLACE FUNCTION "public"."agent_history_append_message"(
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
  p_lease_expires_at timestamptz,
  p_pinned boolean
) RETURNS TABLE (
  inserted boolean, id uuid, sequence bigint, message_id text, client_request_id text, run_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts jsonb, metadata jsonb,
  context_state "public"."agent_message_context_state", pinned boolean, byte_size integer, token_count integer,
  token_counter_id text, content_version integer, lease_expires_at timestamptz, created_at timestamptz,
  updated_at timestamptz, completed_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  RETURN QUERY
    SELECT false, m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status, m.parts,
      m.metadata, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.content_version,
      m.lease_expires_at, m.created_at, m.updated_at, m.completed_at
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
      RETURNING t.next_sequence
    )
    INSERT INTO "public"."agent_message" AS m (
      tenant_id, thread_id, sequence, message_id, client_request_id, run_id, role, status, parts, metadata,
      pinned, byte_size, token_count, token_counter_id, lease_expires_at, completed_at
    )
    SELECT p_tenant_id, p_thread_id, slot.next_sequence, p_message_id, p_client_request_id, p_run_id, p_role,
      p_status, p_parts, p_metadata, p_pinned, p_byte_size, p_token_count, p_token_counter_id, p_lease_expires_at,
      CASE WHEN p_status IN ('completed', 'failed', 'cancelled') THEN now() END
    FROM slot
    RETURNING true, m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status,
      NULL::jsonb, NULL::jsonb, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id,
      m.content_version, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at;
END
$$;--> statement-breakpoint
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
      SELECT v_index, a.*
      FROM "public"."agent_history_append_message"(
        p_tenant_id, NULL, (v_item->>'threadId')::uuid, v_item->>'messageId', v_item->>'clientRequestId',
        (v_item->>'role')::"public"."agent_message_role", (v_item->>'status')::"public"."agent_message_status", v_item->'parts',
        v_item->'metadata', (v_item->>'runId')::uuid, (v_item->>'byteSize')::integer,
        (v_item->>'tokenCount')::integer, v_item->>'tokenCounterId', (v_item->>'leaseExpiresAt')::timestamptz,
        (v_item->>'pinned')::boolean
      ) a;
  END LOOP;
END
$$;--> statement-breakpoint
-- 2. EXECUTE only for the application role, not PUBLIC. A NOINHERIT login calls the functions as itself before they
--    switch role, so it needs its own grant: given here to the members the role has now (an upgrade keeps working),
--    and by the app to a login created later (README, "Tenancy and the application role").
REVOKE EXECUTE ON FUNCTION "public"."agent_history_append_message"(uuid, text, uuid, text, text, "public"."agent_message_role", "public"."agent_message_status", jsonb, jsonb, uuid, integer, integer, text, timestamptz, boolean) FROM PUBLIC;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION "public"."agent_history_append_messages"(uuid, text, jsonb) FROM PUBLIC;--> statement-breakpoint
GRANT EXECUTE ON FUNCTION "public"."agent_history_append_message"(uuid, text, uuid, text, text, "public"."agent_message_role", "public"."agent_message_status", jsonb, jsonb, uuid, integer, integer, text, timestamptz, boolean) TO "agent_history_app";--> statement-breakpoint
GRANT EXECUTE ON FUNCTION "public"."agent_history_append_messages"(uuid, text, jsonb) TO "agent_history_app";--> statement-breakpoint
DO $$
DECLARE
  v_member text;
BEGIN
  FOR v_member IN SELECT m.member::regrole::text FROM pg_auth_members m WHERE m.roleid = 'agent_history_app'::regrole LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION "public"."agent_history_append_message"(uuid, text, uuid, text, text, "public"."agent_message_role", "public"."agent_message_status", jsonb, jsonb, uuid, integer, integer, text, timestamptz, boolean) TO %s', v_member);
    EXECUTE format('GRANT EXECUTE ON FUNCTION "public"."agent_history_append_messages"(uuid, text, jsonb) TO %s', v_member);
  END LOOP;
END
$$;--> statement-breakpoint
-- 3. The audit log is insert-only for the application role: the store never changes or deletes an event (deleting
--    or expiring a thread leaves its events, which hold no content).
REVOKE UPDATE, DELETE ON "public"."agent_audit_event" FROM "agent_history_app";
