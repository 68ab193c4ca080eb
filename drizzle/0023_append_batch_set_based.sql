-- A batch append as a few set-based statements instead of a call of the single append per item: one idempotency
-- look-up for all items, one thread-row UPDATE per thread, one INSERT of all new rows. The per-item call cost more
-- server CPU per message than a lone append statement (0.50 against 0.48 ms, `bench/append-attribution.ts`), and a
-- hot thread's batches run one at a time, so that cost bounded W2.
-- Same signature, result and behaviour (CREATE OR REPLACE keeps its grants and its Citus distribution): rows tagged
-- with the item's index; a retried message or request returns the row stored first (inserted false, with its parts);
-- no row for an item whose thread is missing or deleted; sequences in item order per thread. A batch that repeats a
-- message id or client request id of the same thread within itself (where whether an item is new depends on the
-- items before it) takes the per-item path of 0021 unchanged. Each item is read with the expressions 0021's loop
-- passes to the single append (so the same JSON means the same on both paths), and a one-thread batch waits for its
-- thread before the look-up (so it sees what the writer it waited for committed, as the loop's look-ups do).
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
  IF (SELECT count(DISTINCT (e.value->>'threadId')::uuid) FROM jsonb_array_elements(p_items) e) > 1 THEN
    PERFORM 1 FROM "public"."agent_thread" t
      WHERE t.tenant_id = p_tenant_id
        AND t.id IN (SELECT DISTINCT (e.value->>'threadId')::uuid FROM jsonb_array_elements(p_items) e)
      ORDER BY t.id
      FOR NO KEY UPDATE NOWAIT;
  ELSIF current_setting('transaction_isolation') = 'read committed' THEN
    -- One thread: a writer holding it is waited for here, in a statement of its own, so the look-up below (one
    -- snapshot for every item) sees what it committed, as the loop's look-ups after its first wait do; without it a
    -- message that writer stored and this batch retries hit the unique index instead of being returned. (Under
    -- repeatable read the snapshot is the transaction's: the wait would only add a serialization failure.)
    PERFORM 1 FROM "public"."agent_thread" t
      WHERE t.tenant_id = p_tenant_id
        AND t.id IN (SELECT (e.value->>'threadId')::uuid FROM jsonb_array_elements(p_items) e)
      FOR NO KEY UPDATE;
  END IF;
  IF NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(p_items) e
    GROUP BY (e.value->>'threadId')::uuid, e.value->>'messageId' HAVING count(*) > 1
  ) AND NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(p_items) e
    WHERE e.value->>'clientRequestId' IS NOT NULL
    GROUP BY (e.value->>'threadId')::uuid, e.value->>'clientRequestId' HAVING count(*) > 1
  ) THEN
    -- Every item is independent of the others: new exactly when no stored row has its message id or request id.
    RETURN QUERY
      WITH items AS (
        -- Each argument read with the expression 0021's loop passes to the single append, so an item's JSON means
        -- the same on both paths (a thread id in any spelling the uuid type reads, a JSON null kept as JSON, part
        -- counts that are not a list of integers).
        SELECT (e.ordinality - 1)::integer AS item, (e.value->>'threadId')::uuid AS "threadId",
          e.value->>'messageId' AS "messageId", e.value->>'clientRequestId' AS "clientRequestId",
          (e.value->>'role')::"public"."agent_message_role" AS "role",
          (e.value->>'status')::"public"."agent_message_status" AS "status", e.value->'parts' AS "parts",
          e.value->'metadata' AS "metadata", (e.value->>'runId')::uuid AS "runId",
          (e.value->>'byteSize')::integer AS "byteSize", (e.value->>'tokenCount')::integer AS "tokenCount",
          e.value->>'tokenCounterId' AS "tokenCounterId",
          CASE WHEN jsonb_typeof(e.value->'partTokenCounts') = 'array' THEN ARRAY(
            SELECT (c.value #>> '{}')::integer FROM jsonb_array_elements(e.value->'partTokenCounts') WITH ORDINALITY c
            ORDER BY c.ordinality) END AS "partTokenCounts",
          (e.value->>'leaseExpiresAt')::timestamptz AS "leaseExpiresAt", (e.value->>'pinned')::boolean AS "pinned"
        FROM jsonb_array_elements(p_items) WITH ORDINALITY e
      ),
      found AS (
        SELECT i.item, s.*
        FROM items i
        CROSS JOIN LATERAL (
          SELECT m.id, m.sequence, m.message_id, m.client_request_id, m.run_id, m.role, m.status, m.parts,
            m.metadata, m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.content_version,
            m.lease_expires_at, m.created_at, m.updated_at, m.completed_at
          FROM "public"."agent_message" m
          WHERE m.tenant_id = p_tenant_id AND m.thread_id = i."threadId"
            AND (m.message_id = i."messageId"
              OR (i."clientRequestId" IS NOT NULL AND m.client_request_id = i."clientRequestId"))
          ORDER BY m.sequence
          LIMIT 1
        ) s
      ),
      fresh AS (
        SELECT i.*, row_number() OVER (PARTITION BY i."threadId" ORDER BY i.item) AS rank,
          count(*) OVER (PARTITION BY i."threadId") AS n
        FROM items i
        WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.item = i.item)
      ),
      slot AS (
        UPDATE "public"."agent_thread" t
        SET next_sequence = t.next_sequence + c.n, last_message_at = now(), updated_at = now()
        FROM (SELECT DISTINCT f."threadId", f.n FROM fresh f) c
        WHERE t.tenant_id = p_tenant_id AND t.id = c."threadId" AND t.deleted_at IS NULL
        RETURNING t.id AS thread_id, t.next_sequence - c.n AS before_sequence, t.user_id
      ),
      added AS (
        INSERT INTO "public"."agent_message" AS m (
          tenant_id, thread_id, user_id, sequence, message_id, client_request_id, run_id, role, status, parts,
          metadata, pinned, byte_size, token_count, token_counter_id, part_token_counts, lease_expires_at,
          completed_at
        )
        SELECT p_tenant_id, f."threadId", s.user_id, s.before_sequence + f.rank, f."messageId", f."clientRequestId",
          f."runId", f."role", f."status", f."parts", f."metadata", f."pinned", f."byteSize", f."tokenCount",
          f."tokenCounterId",
          CASE WHEN f."tokenCount" IS NOT NULL AND array_position(f."partTokenCounts", NULL) IS NULL
            AND 0 <= ALL (f."partTokenCounts")
            AND (SELECT coalesce(sum(c), 0) FROM unnest(f."partTokenCounts") c) = f."tokenCount"
          THEN f."partTokenCounts" END,
          f."leaseExpiresAt", CASE WHEN f."status" IN ('completed', 'failed', 'cancelled') THEN now() END
        FROM fresh f JOIN slot s ON s.thread_id = f."threadId"
        ORDER BY f.item
        RETURNING m.thread_id, m.message_id, m.id, m.sequence, m.client_request_id, m.run_id, m.role, m.status,
          m.context_state, m.pinned, m.byte_size, m.token_count, m.token_counter_id, m.content_version,
          m.lease_expires_at, m.created_at, m.updated_at, m.completed_at
      )
      SELECT f.item, false, f.id, f.sequence, f.message_id, f.client_request_id, f.run_id, f.role, f.status, f.parts,
        f.metadata, f.context_state, f.pinned, f.byte_size, f.token_count, f.token_counter_id, f.content_version,
        f.lease_expires_at, f.created_at, f.updated_at, f.completed_at
      FROM found f
      UNION ALL
      SELECT i.item, true, a.id, a.sequence, a.message_id, a.client_request_id, a.run_id, a.role, a.status,
        NULL::jsonb, NULL::jsonb, a.context_state, a.pinned, a.byte_size, a.token_count, a.token_counter_id,
        a.content_version, a.lease_expires_at, a.created_at, a.updated_at, a.completed_at
      FROM added a JOIN fresh i ON i."threadId" = a.thread_id AND i."messageId" = a.message_id;
    RETURN;
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
$$;
