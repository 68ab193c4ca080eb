-- `content_version` is a version the database keeps: every UPDATE that changes a message's parts raises it by at
-- least one, whoever writes (the store's checkpoint, finalize, reopen, redaction or migration, another store, psql),
-- and no UPDATE lowers it. An explicit value is kept when it is higher (a redaction's `content_version + 1` stays
-- exactly one higher). So a copy of a message's parts, a summary or a converted form, keyed by its row and
-- `content_version`, is current exactly while the version is. Parts compared as jsonb (key order does not count);
-- writing the same parts again raises nothing. The trigger sets only the row's own column (safe on Citus shards), and
-- its order against 0017's trigger does not matter: that one reads the parts and writes only `search_vector`.
CREATE OR REPLACE FUNCTION "public"."agent_history_message_content_version"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NEW.parts IS DISTINCT FROM OLD.parts THEN
    NEW.content_version := greatest(NEW.content_version, OLD.content_version + 1);
  ELSE
    NEW.content_version := greatest(NEW.content_version, OLD.content_version);
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER agent_message_content_version BEFORE UPDATE OF parts, content_version ON "public"."agent_message"
FOR EACH ROW EXECUTE FUNCTION "public"."agent_history_message_content_version"();
