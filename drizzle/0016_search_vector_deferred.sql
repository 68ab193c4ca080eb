DROP INDEX "agent_message_search_idx";--> statement-breakpoint
ALTER TABLE "agent_message" ALTER COLUMN "search_vector" DROP EXPRESSION;--> statement-breakpoint
CREATE INDEX "agent_message_search_pending_idx" ON "agent_message" USING btree ("tenant_id","thread_id") WHERE "agent_message"."search_vector" is null;--> statement-breakpoint
CREATE INDEX "agent_message_search_idx" ON "agent_message" USING gin ("search_vector") WHERE "agent_message"."search_vector" is not null;