-- Memory across threads: FORCE row-level security on agent_memory (its owner is subject to the tenant policy too)
-- and the application role's grants. Ranking needs no function: cosine similarity is computed in the query.
ALTER TABLE "public"."agent_memory" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON "public"."agent_memory" TO "agent_history_app";
