-- The one-statement writes: the writes of a chat turn (reading its thread, starting and finishing its run, each
-- checkpoint and the finalize of the answer, the context snapshot) in one statement and one round trip each, where a
-- transaction takes four to seven (begin, the tenant settings, the work, commit). Like the one-statement reads,
-- each is SECURITY INVOKER with a pinned search_path and every name qualified, sets the tenant, the user (empty when
-- the store is tenant-wide) and the role it is given with set_config(…, true), and runs in the statement's own
-- transaction, so the settings end with it. Each refuses to run on a Citus coordinator (AH001): the store then
-- writes in a transaction, as it does when its database is the caller's transaction. A function that writes
-- nothing returns no row, and the store takes its transaction path to tell why (a refusal stays a refusal: the
-- versions and boundaries it checks only move forward).
--
-- A live thread, or no row.
CREATE FUNCTION "public"."agent_history_get_thread"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid
) RETURNS SETOF "public"."agent_thread" LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_get_thread does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  RETURN QUERY
    SELECT t.* FROM "public"."agent_thread" t
    WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL;
END
$$;--> statement-breakpoint
-- A run started (status running) on a live thread, with the thread's user; no row when the thread is missing.
CREATE FUNCTION "public"."agent_history_start_run"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_provider text,
  p_model text,
  p_metadata jsonb
) RETURNS SETOF "public"."agent_run" LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_start_run does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  RETURN QUERY
    INSERT INTO "public"."agent_run" AS r (tenant_id, thread_id, user_id, status, provider, model, metadata)
    SELECT t.tenant_id, t.id, t.user_id, 'running', p_provider, p_model, p_metadata
    FROM "public"."agent_thread" t
    WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL
    RETURNING r.*;
END
$$;--> statement-breakpoint
-- A run ended with its status, usage, error and finish reason (the provider and model only where the run has none);
-- a run already finished comes back unchanged; no row when the run is missing.
CREATE FUNCTION "public"."agent_history_finish_run"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_run_id uuid,
  p_status text,
  p_input_tokens integer,
  p_output_tokens integer,
  p_reasoning_tokens integer,
  p_cached_input_tokens integer,
  p_error jsonb,
  p_finish_reason text,
  p_provider text,
  p_model text
) RETURNS SETOF "public"."agent_run" LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_finish_run does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  RETURN QUERY
    UPDATE "public"."agent_run" AS r
    SET status = p_status::"public"."agent_run_status", input_tokens = p_input_tokens, output_tokens = p_output_tokens,
      reasoning_tokens = p_reasoning_tokens, cached_input_tokens = p_cached_input_tokens, error = p_error,
      finish_reason = p_finish_reason, provider = coalesce(r.provider, p_provider), model = coalesce(r.model, p_model),
      finished_at = greatest(now(), r.started_at), updated_at = now()
    WHERE r.tenant_id = p_tenant_id AND r.id = p_run_id AND r.finished_at IS NULL
    RETURNING r.*;
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
    SELECT r.* FROM "public"."agent_run" r WHERE r.tenant_id = p_tenant_id AND r.id = p_run_id;
END
$$;--> statement-breakpoint
-- A checkpoint (p_status streaming) or the finalize (completed, failed or cancelled) of an assistant message that
-- is still pending or streaming and not redacted: its parts, its metadata (null: unchanged), byte size, token counts
-- and lease; a finalize also sets completed_at. Then the message's tool payload rows that its parts no longer refer
-- to (p_referenced: 'part:field' keys) are deleted. Returns the message's columns as the one-statement reads do
-- (never its search vector); no row when no message was written (missing, finished, redacted). With
-- p_defer_search the row keeps no search vector, as a deferred store's append does. With p_run (a finalize's
-- `finishRun`: the run's id, usage, error, finish reason, provider and model) the message's run of the same thread
-- is finished in the same statement with the message's status (a run finished already stays as it was); a run
-- that is not the thread's raises P0002 and nothing is written.
CREATE FUNCTION "public"."agent_history_write_answer"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_message_id text,
  p_status text,
  p_parts json,
  p_metadata jsonb,
  p_byte_size integer,
  p_token_count integer,
  p_token_counter_id text,
  p_part_token_counts integer[],
  p_lease_expires_at timestamptz,
  p_referenced text[],
  p_defer_search boolean,
  p_run jsonb
) RETURNS TABLE (
  id uuid, thread_id uuid, user_id text, run_id uuid, sequence bigint, message_id text, client_request_id text,
  source_message_id uuid,
  role "public"."agent_message_role", status "public"."agent_message_status", parts json, metadata jsonb,
  context_state "public"."agent_message_context_state", exclusion_reason text, pinned boolean,
  schema_version integer, content_version integer, byte_size integer, token_count integer, token_counter_id text,
  part_token_counts integer[],
  lease_expires_at timestamptz, created_at timestamptz, updated_at timestamptz, completed_at timestamptz,
  redacted_at timestamptz, deleted_at timestamptz
) LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  written "public"."agent_message";
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_write_answer does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  UPDATE "public"."agent_message" AS m
  SET parts = p_parts, metadata = coalesce(p_metadata, m.metadata), status = p_status::"public"."agent_message_status",
    search_version = CASE WHEN p_defer_search THEN -1::smallint ELSE m.search_version END,
    byte_size = p_byte_size, token_count = p_token_count, token_counter_id = p_token_counter_id,
    part_token_counts = p_part_token_counts, lease_expires_at = p_lease_expires_at,
    completed_at = CASE WHEN p_status = 'streaming' THEN m.completed_at ELSE now() END, updated_at = now()
  WHERE m.tenant_id = p_tenant_id AND m.thread_id = p_thread_id AND m.message_id = p_message_id
    AND m.status IN ('pending', 'streaming') AND m.context_state <> 'redacted'
  RETURNING m.* INTO written;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  DELETE FROM "public"."agent_tool_payload" p
  WHERE p.tenant_id = p_tenant_id AND p.message_id = written.id
    AND (p.part::text || ':' || p.field) <> ALL (coalesce(p_referenced, '{}'::text[]));
  IF p_run IS NOT NULL THEN
    UPDATE "public"."agent_run" AS r
    SET status = p_status::"public"."agent_run_status", input_tokens = (p_run->>'input_tokens')::integer,
      output_tokens = (p_run->>'output_tokens')::integer, reasoning_tokens = (p_run->>'reasoning_tokens')::integer,
      cached_input_tokens = (p_run->>'cached_input_tokens')::integer, error = nullif(p_run->'error', 'null'::jsonb),
      finish_reason = p_run->>'finish_reason', provider = coalesce(r.provider, p_run->>'provider'),
      model = coalesce(r.model, p_run->>'model'), finished_at = greatest(now(), r.started_at), updated_at = now()
    WHERE r.tenant_id = p_tenant_id AND r.id = (p_run->>'id')::uuid AND r.thread_id = p_thread_id
      AND r.finished_at IS NULL;
    IF NOT FOUND THEN
      PERFORM 1 FROM "public"."agent_run" r
      WHERE r.tenant_id = p_tenant_id AND r.id = (p_run->>'id')::uuid AND r.thread_id = p_thread_id;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'run not found' USING ERRCODE = 'P0002';
      END IF;
    END IF;
  END IF;
  RETURN QUERY SELECT w.id, w.thread_id, w.user_id, w.run_id, w.sequence, w.message_id, w.client_request_id,
    w.source_message_id, w.role, w.status, w.parts, w.metadata, w.context_state, w.exclusion_reason, w.pinned,
    w.schema_version, w.content_version, w.byte_size, w.token_count, w.token_counter_id, w.part_token_counts,
    w.lease_expires_at, w.created_at, w.updated_at, w.completed_at, w.redacted_at, w.deleted_at
    FROM (SELECT written.*) w;
END
$$;--> statement-breakpoint
-- Snapshot p_expected_version + 1 of a live thread, with the thread's user, stale when its summary is (the summary
-- locked FOR SHARE, so a redaction in progress on it is waited for); written only when the thread's newest version is
-- p_expected_version and the boundary lies within the thread and not below the newest not-stale snapshot's. No row
-- when it is refused (the thread or summary missing, another version, a boundary out of range).
CREATE FUNCTION "public"."agent_history_write_snapshot"(
  p_tenant_id uuid,
  p_role_name text,
  p_user_id text,
  p_thread_id uuid,
  p_expected_version integer,
  p_through_sequence bigint,
  p_summary_id uuid,
  p_included_sequences jsonb,
  p_pruned jsonb,
  p_budget jsonb,
  p_policy_version text,
  p_messages_hash text,
  p_step_number integer
) RETURNS SETOF "public"."agent_context_snapshot" LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  thread_user text;
  thread_count bigint;
  summary_stale boolean := false;
BEGIN
  IF current_setting('citus.propagate_set_commands', true) IS NOT NULL THEN
    RAISE EXCEPTION 'agent_history_write_snapshot does not run on a Citus coordinator' USING ERRCODE = 'AH001';
  END IF;
  PERFORM set_config('app.tenant_id', p_tenant_id::text, true);
  PERFORM set_config('app.user_id', coalesce(p_user_id, ''), true);
  IF p_role_name IS NOT NULL THEN
    PERFORM set_config('role', p_role_name, true);
  END IF;
  SELECT t.user_id, t.next_sequence INTO thread_user, thread_count FROM "public"."agent_thread" t
  WHERE t.tenant_id = p_tenant_id AND t.id = p_thread_id AND t.deleted_at IS NULL;
  IF NOT FOUND OR p_through_sequence < 0 OR p_through_sequence > thread_count THEN
    RETURN;
  END IF;
  IF p_summary_id IS NOT NULL THEN
    SELECT s.stale INTO summary_stale FROM "public"."agent_summary" s
    WHERE s.tenant_id = p_tenant_id AND s.thread_id = p_thread_id AND s.id = p_summary_id
    FOR SHARE;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  RETURN QUERY
    INSERT INTO "public"."agent_context_snapshot" AS c (tenant_id, thread_id, user_id, version, through_sequence,
      summary_id, included_sequences, pruned, budget, policy_version, messages_hash, step_number, stale)
    SELECT p_tenant_id, p_thread_id, thread_user, p_expected_version + 1, p_through_sequence, p_summary_id,
      p_included_sequences, p_pruned, p_budget, p_policy_version, p_messages_hash, p_step_number, summary_stale
    WHERE (SELECT coalesce(max(v.version), 0) FROM "public"."agent_context_snapshot" v
           WHERE v.tenant_id = p_tenant_id AND v.thread_id = p_thread_id) = p_expected_version
      AND p_through_sequence >= coalesce((SELECT b.through_sequence FROM "public"."agent_context_snapshot" b
           WHERE b.tenant_id = p_tenant_id AND b.thread_id = p_thread_id AND NOT b.stale
           ORDER BY b.version DESC LIMIT 1), 0)
    RETURNING c.*;
END
$$;
