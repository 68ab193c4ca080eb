-- Append several messages of one tenant in one statement and one commit (write combining: the store queues the
-- appends that arrive while others are in flight and sends them together). Each item goes through
-- agent_history_append_message, in the order given, so a batch means exactly what the same appends one after the
-- other mean: idempotent by message id and client request id (also within the batch), gapless sequences, the
-- thread's sequence order equal to the commit order. A batch of several threads first locks them all, in id
-- order and with NOWAIT: it never waits for one thread while holding another, so it can be part of no deadlock
-- and never holds up a free thread behind a busy one. If one is busy (55P03), the store resends the batch split
-- by thread; a batch of one thread waits for it like a single append. Any error rolls the whole batch back.
CREATE OR REPLACE FUNCTION "agent_history_append_messages"(
  p_tenant_id uuid,
  p_role_name text,
  p_items jsonb
) RETURNS TABLE (
  item integer, inserted boolean, id uuid, sequence bigint, message_id text, client_request_id text, run_id uuid,
  role "agent_message_role", status "agent_message_status", parts jsonb, metadata jsonb,
  context_state "agent_message_context_state", pinned boolean, byte_size integer, token_count integer,
  token_counter_id text, content_version integer, lease_expires_at timestamptz, created_at timestamptz,
  updated_at timestamptz, completed_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER AS $$
DECLARE
  v_item jsonb;
  v_index integer;
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  IF (SELECT count(DISTINCT e.value->>'threadId') FROM jsonb_array_elements(p_items) e) > 1 THEN
    PERFORM 1 FROM "agent_thread" t
      WHERE t.tenant_id = p_tenant_id
        AND t.id IN (SELECT DISTINCT (e.value->>'threadId')::uuid FROM jsonb_array_elements(p_items) e)
      ORDER BY t.id
      FOR NO KEY UPDATE NOWAIT;
  END IF;
  FOR v_item, v_index IN SELECT e.value, (e.ordinality - 1)::integer FROM jsonb_array_elements(p_items) WITH ORDINALITY e ORDER BY e.ordinality LOOP
    RETURN QUERY
      SELECT v_index, a.*
      FROM agent_history_append_message(
        p_tenant_id, NULL, (v_item->>'threadId')::uuid, v_item->>'messageId', v_item->>'clientRequestId',
        (v_item->>'role')::"agent_message_role", (v_item->>'status')::"agent_message_status", v_item->'parts',
        v_item->'metadata', (v_item->>'runId')::uuid, (v_item->>'byteSize')::integer,
        (v_item->>'tokenCount')::integer, v_item->>'tokenCounterId', (v_item->>'leaseExpiresAt')::timestamptz,
        (v_item->>'pinned')::boolean
      ) a;
  END LOOP;
END
$$;--> statement-breakpoint
GRANT EXECUTE ON FUNCTION "agent_history_append_messages"(uuid, text, jsonb) TO "agent_history_app";
