-- FORCE row-level security: without it the tables' owner would bypass the tenant policies.
ALTER TABLE "agent_thread" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_run" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_message" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_summary" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_context_snapshot" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_audit_event" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
GRANT USAGE ON SCHEMA "public" TO "agent_history_app";--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON "agent_thread", "agent_run", "agent_message", "agent_summary", "agent_context_snapshot", "agent_audit_event" TO "agent_history_app";--> statement-breakpoint
-- Append one message in one statement (one round trip, autocommit): set the tenant and the role for this
-- transaction only, return the stored row when the message id or client request id is already there
-- (idempotent retry), otherwise take the next sequence from the thread row and insert, atomically.
-- Two identical requests racing: the loser's INSERT hits the unique index, the whole statement rolls back
-- (the sequence bump with it, so no gap) and the caller reads the winner's row.
CREATE OR REPLACE FUNCTION "agent_history_append_message"(
  p_tenant_id uuid,
  p_role_name text,
  p_thread_id uuid,
  p_message_id text,
  p_client_request_id text,
  p_role "agent_message_role",
  p_status "agent_message_status",
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
  role "agent_message_role", status "agent_message_status", parts jsonb, metadata jsonb,
  context_state "agent_message_context_state", pinned boolean, byte_size integer, token_count integer,
  token_counter_id text, content_version integer, lease_expires_at timestamptz, created_at timestamptz,
  updated_at timestamptz, completed_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER AS $$
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  RETURN QUERY
    SELECT false, m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status, m.parts,
      m.metadata, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.content_version,
      m.lease_expires_at, m.created_at, m.updated_at, m.completed_at
    FROM "agent_message" m
    WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id
      AND (m.message_id = p_message_id OR (p_client_request_id IS NOT NULL AND m.client_request_id = p_client_request_id))
    ORDER BY m.sequence
    LIMIT 1;
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
    WITH slot AS (
      UPDATE "agent_thread" t
      SET next_sequence = t.next_sequence + 1, last_message_at = now(), updated_at = now()
      WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL
      RETURNING t.next_sequence
    )
    INSERT INTO "agent_message" AS m (
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
GRANT EXECUTE ON FUNCTION "agent_history_append_message"(uuid, text, uuid, text, text, "agent_message_role", "agent_message_status", jsonb, jsonb, uuid, integer, integer, text, timestamptz, boolean) TO "agent_history_app";
