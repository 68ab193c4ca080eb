ALTER TABLE "agent_context_snapshot" ADD COLUMN "step_number" integer;--> statement-breakpoint
ALTER TABLE "agent_run" ADD COLUMN "finish_reason" text;