DROP INDEX "agent_thread_user_recent_idx";--> statement-breakpoint
DROP INDEX "agent_thread_recent_idx";--> statement-breakpoint
ALTER TABLE "agent_thread" ADD COLUMN "last_activity_minute" timestamp with time zone GENERATED ALWAYS AS (date_bin('1 minute'::interval, last_message_at, '2000-01-01 00:00:00+00'::timestamptz)) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "agent_thread_user_recent_idx" ON "agent_thread" USING btree ("tenant_id","user_id","last_activity_minute" DESC NULLS LAST) WHERE "agent_thread"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "agent_thread_recent_idx" ON "agent_thread" USING btree ("tenant_id","last_activity_minute" DESC NULLS LAST) WHERE "agent_thread"."deleted_at" is null;