-- The stream chunk log (0014) under the same rules as the other tables: FORCE row-level security, so the owner is
-- bound by the tenant policy too, and the application role may read, write and delete its tenant's chunks.
ALTER TABLE "agent_stream_chunk" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
GRANT SELECT, INSERT, DELETE ON "agent_stream_chunk" TO "agent_history_app";
