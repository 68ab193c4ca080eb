-- The one-statement reads of 0013, returning each message as one JSON value already in the API's shape
-- (StoredMessage: camelCase keys, the UIMessage built from message_id, role, parts and metadata), so the client
-- parses one value per message instead of mapping 26 columns per row. One row per message, not one array per page:
-- a page of 50 as one value is a string of ~170 KB that the client allocates in its old generation (more major
-- GCs); 50 small values die young, as a plain SELECT's rows do. Same settings, same role switch, same checks and
-- filters as 0013 (SECURITY INVOKER, forced row-level security as the application role).
-- New names rather than a changed return type, so a server still running the previous release keeps calling the
-- 0013 functions during an upgrade; a later release drops those.
-- enable_sort = off (for the function's run only): the user-scope clause of the row-level security policy gets the
-- planner's default selectivity (0.5 %), so on a table where one thread holds most rows it believed a sequential
-- scan and a sort of the whole thread cheaper than walking the (tenant, thread, sequence) index backwards to the
-- page's LIMIT: 10 ms against 0.1 ms for a page of a 10,000-message thread.
CREATE OR REPLACE FUNCTION "public"."agent_history_read_messages"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_before bigint,
  p_limit integer,
  p_roles text[],
  p_only_eligible boolean
) RETURNS SETOF json
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_read_messages does not run on a Citus coordinator' USING ERRCODE = 'AH001';
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
    SELECT json_build_object(
      'rowId', m.id, 'threadId', m.thread_id, 'sequence', m.sequence,
      'message', CASE WHEN m.metadata IS NULL OR m.metadata = '{}'::jsonb
        THEN json_build_object('id', m.message_id, 'role', m.role, 'parts', m.parts)
        ELSE json_build_object('id', m.message_id, 'role', m.role, 'parts', m.parts, 'metadata', m.metadata) END,
      'status', m.status, 'contextState', m.context_state, 'exclusionReason', m.exclusion_reason,
      'pinned', m.pinned, 'runId', m.run_id, 'clientRequestId', m.client_request_id, 'byteSize', m.byte_size,
      'tokenCount', m.token_count, 'tokenCounterId', m.token_counter_id, 'contentVersion', m.content_version,
      'schemaVersion', m.schema_version, 'storedSchemaVersion', m.schema_version,
      'leaseExpiresAt', m.lease_expires_at, 'createdAt', m.created_at, 'updatedAt', m.updated_at,
      'completedAt', m.completed_at, 'redactedAt', m.redacted_at, 'deletedAt', m.deleted_at
    )
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
-- loadContext: first a 'context' row (the thread, the newest valid snapshot, its summary, the newest valid summary,
-- each as to_jsonb of its row, and the newest snapshot version), then the tail after the snapshot's boundary
-- ('tail', newest first, at most p_max_tail + 1) and the pinned messages at or before it ('pinned', oldest first),
-- one row per message in the page's shape.
-- STABLE, so every query in it reads the snapshot of the calling statement, as in a repeatable-read transaction.
CREATE OR REPLACE FUNCTION "public"."agent_history_read_context"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_max_tail integer
) RETURNS TABLE (kind text, data json)
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
DECLARE
  v_thread jsonb;
  v_snapshot jsonb;
  v_boundary bigint := 0;
  v_summary_id uuid;
  v_summary jsonb;
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_read_context does not run on a Citus coordinator' USING ERRCODE = 'AH001';
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
  SELECT to_jsonb(s), s.through_sequence, s.summary_id INTO v_snapshot, v_boundary, v_summary_id
    FROM "public"."agent_context_snapshot" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.stale = false
    ORDER BY s.version DESC LIMIT 1;
  v_boundary := coalesce(v_boundary, 0);
  IF v_summary_id IS NOT NULL THEN
    SELECT to_jsonb(s) INTO v_summary FROM "public"."agent_summary" s
      WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.id = v_summary_id AND s.stale = false;
  END IF;
  kind := 'context';
  data := json_build_object(
    'thread', v_thread,
    'snapshot', v_snapshot,
    'summary', v_summary,
    'latestSummary', (SELECT to_jsonb(s) FROM "public"."agent_summary" s
      WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.stale = false
      ORDER BY s.through_sequence DESC, s.created_at DESC LIMIT 1),
    'version', (SELECT coalesce(max(s.version), 0) FROM "public"."agent_context_snapshot" s
      WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id));
  RETURN NEXT;
  RETURN QUERY SELECT 'tail', json_build_object(
      'rowId', m.id, 'threadId', m.thread_id, 'sequence', m.sequence,
      'message', CASE WHEN m.metadata IS NULL OR m.metadata = '{}'::jsonb
        THEN json_build_object('id', m.message_id, 'role', m.role, 'parts', m.parts)
        ELSE json_build_object('id', m.message_id, 'role', m.role, 'parts', m.parts, 'metadata', m.metadata) END,
      'status', m.status, 'contextState', m.context_state, 'exclusionReason', m.exclusion_reason,
      'pinned', m.pinned, 'runId', m.run_id, 'clientRequestId', m.client_request_id, 'byteSize', m.byte_size,
      'tokenCount', m.token_count, 'tokenCounterId', m.token_counter_id, 'contentVersion', m.content_version,
      'schemaVersion', m.schema_version, 'storedSchemaVersion', m.schema_version,
      'leaseExpiresAt', m.lease_expires_at, 'createdAt', m.created_at, 'updatedAt', m.updated_at,
      'completedAt', m.completed_at, 'redactedAt', m.redacted_at, 'deletedAt', m.deleted_at
    )
    FROM "public"."agent_message" m
    WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence > v_boundary AND m.deleted_at IS NULL
    ORDER BY m.sequence DESC LIMIT p_max_tail + 1;
  IF v_boundary > 0 THEN
    RETURN QUERY SELECT 'pinned', json_build_object(
      'rowId', m.id, 'threadId', m.thread_id, 'sequence', m.sequence,
      'message', CASE WHEN m.metadata IS NULL OR m.metadata = '{}'::jsonb
        THEN json_build_object('id', m.message_id, 'role', m.role, 'parts', m.parts)
        ELSE json_build_object('id', m.message_id, 'role', m.role, 'parts', m.parts, 'metadata', m.metadata) END,
      'status', m.status, 'contextState', m.context_state, 'exclusionReason', m.exclusion_reason,
      'pinned', m.pinned, 'runId', m.run_id, 'clientRequestId', m.client_request_id, 'byteSize', m.byte_size,
      'tokenCount', m.token_count, 'tokenCounterId', m.token_counter_id, 'contentVersion', m.content_version,
      'schemaVersion', m.schema_version, 'storedSchemaVersion', m.schema_version,
      'leaseExpiresAt', m.lease_expires_at, 'createdAt', m.created_at, 'updatedAt', m.updated_at,
      'completedAt', m.completed_at, 'redactedAt', m.redacted_at, 'deletedAt', m.deleted_at
    )
      FROM "public"."agent_message" m
      WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.sequence <= v_boundary AND m.pinned
        AND m.deleted_at IS NULL
      ORDER BY m.sequence;
  END IF;
END
$$;
