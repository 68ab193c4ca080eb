-- A conversation's content (a message's parts, an answer's stream chunks, a summary, a tool payload) is compressed
-- with lz4 where the server was built with it (PostgreSQL's own packages are; PGlite is not, and keeps pglz): a page
-- of a long thread decompresses its messages' parts in about a third less server time than with pglz, the
-- default. Only values written from now on are compressed so; a value written before keeps pglz, and both read alike.
-- Citus propagates the setting to the shards and creates new ones with it.
DO $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM pg_catalog.pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)
  ) THEN
    ALTER TABLE "public"."agent_message" ALTER COLUMN "parts" SET COMPRESSION lz4;
    ALTER TABLE "public"."agent_stream_chunk" ALTER COLUMN "chunks" SET COMPRESSION lz4;
    ALTER TABLE "public"."agent_summary" ALTER COLUMN "content" SET COMPRESSION lz4;
    ALTER TABLE "public"."agent_tool_payload" ALTER COLUMN "content" SET COMPRESSION lz4;
  END IF;
END
$$;
