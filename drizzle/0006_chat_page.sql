-- A chat window's page (`listChatMessages`): the newest p_limit messages of a thread older than p_before, newest
-- first, with only what a chat window shows of each: the UIMessage (id, role, parts, metadata, and the shape version
-- its parts were written in), its place, status and whether the model still sees it, and when it was stored. Ten
-- columns where the stored-message read returns 27, and the thread's visibility checked in the page's own query (an
-- uncorrelated EXISTS, run once); only an empty page checks the thread again, to tell a missing, deleted or invisible
-- thread (P0002) from a thread with nothing on the page. Like the other one-statement reads it is SECURITY INVOKER
-- with a pinned search_path and every name qualified, sets the tenant, the user (empty when the store is
-- tenant-wide) and the role it is given with set_config(…, true), runs with enable_sort = off (the page walks the
-- (tenant_id, thread_id, sequence) index to its LIMIT), and refuses to run on a Citus coordinator (AH001), where the
-- store reads in a transaction instead.
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
) LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET enable_sort = off AS $$
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
      -- coalesce, not "IS NULL OR": the bound stays an index condition in a generic plan
      AND m.sequence < coalesce(p_before, 9223372036854775807)
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
