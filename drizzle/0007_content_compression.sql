-- A conversation's content (a message's parts, an answer's stream chunks, a summary, a tool payload) is compressed
-- with lz4 where the server was built with it (PostgreSQL's own packages are; PGlite is not, and keeps pglz): a page
-- of a long thread decompresses its messages' parts in about a third less server time than with pglz, the
-- default. Only values written from now on are compressed so; a value written before keeps pglz, and both read alike.
-- Citus propagates the setting to the shards and creates new ones with it. Each ALTER takes its table's exclusive
-- lock for a moment: rather than wait behind a long transaction (every new statement on the table would queue
-- behind the wait), the migration waits at most 10 s for each and otherwise fails, with nothing applied, to be run
-- again.
DO $$
DECLARE
  previous text := current_setting('lock_timeout');
BEGIN
  IF EXISTS (
    SELECT 1 FROM pg_catalog.pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)
  ) THEN
    PERFORM set_config('lock_timeout', '10s', true);
    ALTER TABLE "public"."agent_message" ALTER COLUMN "parts" SET COMPRESSION lz4;
    ALTER TABLE "public"."agent_stream_chunk" ALTER COLUMN "chunks" SET COMPRESSION lz4;
    ALTER TABLE "public"."agent_summary" ALTER COLUMN "content" SET COMPRESSION lz4;
    ALTER TABLE "public"."agent_tool_payload" ALTER COLUMN "content" SET COMPRESSION lz4;
    PERFORM set_config('lock_timeout', previous, true);
  END IF;
END
$$;
