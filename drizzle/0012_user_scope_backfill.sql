-- The user scope (0010 adds user_id to every table, the restrictive user-scope policies and the foreign keys that
-- hold a row's user_id equal to its thread's).
-- 1. Existing rows take their thread's user. An audit event of a thread deleted before this migration keeps null:
--    it stays visible tenant-wide only. Run as the owner or a superuser, like every migration. row_security off
--    makes a role that forced row-level security would filter fail here, instead of backfilling nothing.
SELECT set_config('row_security', 'off', true);--> statement-breakpoint
UPDATE "public"."agent_run" c SET user_id = t.user_id FROM "public"."agent_thread" t
  WHERE t.tenant_id = c.tenant_id AND t.id = c.thread_id AND t.user_id IS NOT NULL AND c.user_id IS NULL;--> statement-breakpoint
UPDATE "public"."agent_message" c SET user_id = t.user_id FROM "public"."agent_thread" t
  WHERE t.tenant_id = c.tenant_id AND t.id = c.thread_id AND t.user_id IS NOT NULL AND c.user_id IS NULL;--> statement-breakpoint
UPDATE "public"."agent_summary" c SET user_id = t.user_id FROM "public"."agent_thread" t
  WHERE t.tenant_id = c.tenant_id AND t.id = c.thread_id AND t.user_id IS NOT NULL AND c.user_id IS NULL;--> statement-breakpoint
UPDATE "public"."agent_context_snapshot" c SET user_id = t.user_id FROM "public"."agent_thread" t
  WHERE t.tenant_id = c.tenant_id AND t.id = c.thread_id AND t.user_id IS NOT NULL AND c.user_id IS NULL;--> statement-breakpoint
UPDATE "public"."agent_audit_event" c SET user_id = t.user_id FROM "public"."agent_thread" t
  WHERE t.tenant_id = c.tenant_id AND t.id = c.thread_id AND t.user_id IS NOT NULL AND c.user_id IS NULL;--> statement-breakpoint
SELECT set_config('row_security', 'on', true);--> statement-breakpoint
-- 2. The append function copies the thread's user_id onto the message it inserts, from the thread row it already
--    updates (no extra read). It is SECURITY INVOKER and never touches app.user_id: under a user scope, another
--    user's thread is invisible to its UPDATE, so nothing is inserted. Same signature: CREATE OR REPLACE keeps the
--    Citus distribution and the grants of 0009.
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
      RETURNING t.next_sequence, t.user_id
    )
    INSERT INTO "public"."agent_message" AS m (
      tenant_id, thread_id, user_id, sequence, message_id, client_request_id, run_id, role, status, parts, metadata,
      pinned, byte_size, token_count, token_counter_id, lease_expires_at, completed_at
    )
    SELECT p_tenant_id, p_thread_id, slot.user_id, slot.next_sequence, p_message_id, p_client_request_id, p_run_id, p_role,
      p_status, p_parts, p_metadata, p_pinned, p_byte_size, p_token_count, p_token_counter_id, p_lease_expires_at,
      CASE WHEN p_status IN ('completed', 'failed', 'cancelled') THEN now() END
    FROM slot
    RETURNING true, m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status,
      NULL::jsonb, NULL::jsonb, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id,
      m.content_version, m.lease_expires_at, m.created_at, m.updated_at, m.completed_at;
END
$$;
