-- The search vector is no longer a generated column (0016 dropped its expression, keeping every stored vector):
-- this trigger sets it when a row is inserted or its parts change (a redaction, a stream's final parts), with the
-- expression and size limit of 0007. A store created with `search: 'deferred'` or `false` sets
-- `agent_history.search` to 'deferred' for its append statement only (transaction-local): the row is then stored
-- with a null vector, which `searchMessages` computes on the fly and `indexPendingMessages` fills in batches.
-- Any other writer (an update of the parts, another store, psql) gets the vector of the current parts, and a
-- vector written directly is replaced by the one of the parts (only clearing it, for a rebuild, is kept): a vector
-- is always the current parts' or null, never a stale or forged one.
CREATE OR REPLACE FUNCTION "public"."agent_history_message_search_vector"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  texts jsonb;
BEGIN
  IF current_setting('agent_history.search', true) = 'deferred' THEN
    NEW.search_vector := NULL;
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.search_vector IS NULL AND NEW.parts IS NOT DISTINCT FROM OLD.parts THEN
    RETURN NEW;
  END IF;
  texts := jsonb_path_query_array(NEW.parts, 'strict $[*] ? (@.type == "text").text');
  IF octet_length(texts::text) <= 250000 THEN
    NEW.search_vector := to_tsvector('simple'::regconfig, texts);
  ELSE
    NEW.search_vector := to_tsvector('simple'::regconfig,
      left(replace(replace(replace(texts::text, '\n', ' '), '\r', ' '), '\t', ' '), 100000));
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER agent_message_search_vector BEFORE INSERT OR UPDATE OF parts, search_vector ON "public"."agent_message"
FOR EACH ROW EXECUTE FUNCTION "public"."agent_history_message_search_vector"();
