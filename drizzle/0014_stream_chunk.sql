CREATE TABLE "agent_stream_chunk" (
	"tenant_id" uuid NOT NULL,
	"thread_id" uuid NOT NULL,
	"message_id" uuid NOT NULL,
	"user_id" text,
	"batch" integer NOT NULL,
	"chunks" text NOT NULL,
	"final" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_stream_chunk_pk" PRIMARY KEY("tenant_id","message_id","batch"),
	CONSTRAINT "agent_stream_chunk_batch_nonnegative" CHECK ("agent_stream_chunk"."batch" >= 0)
);
--> statement-breakpoint
ALTER TABLE "agent_stream_chunk" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_stream_chunk" ADD CONSTRAINT "agent_stream_chunk_message_fk" FOREIGN KEY ("tenant_id","message_id") REFERENCES "public"."agent_message"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_stream_chunk" ADD CONSTRAINT "agent_stream_chunk_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_stream_chunk_thread_idx" ON "agent_stream_chunk" USING btree ("tenant_id","thread_id");--> statement-breakpoint
CREATE POLICY "agent_stream_chunk_tenant_isolation" ON "agent_stream_chunk" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_stream_chunk"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_stream_chunk"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_stream_chunk"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_stream_chunk"."user_id" = nullif(current_setting('app.user_id', true), '')));