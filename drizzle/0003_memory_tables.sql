CREATE TABLE "agent_memory" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"user_id" text,
	"scope" text NOT NULL,
	"kind" text NOT NULL,
	"thread_id" uuid,
	"content" text NOT NULL,
	"source_thread_id" uuid,
	"source_message_id" uuid,
	"source_content_version" integer,
	"version" integer DEFAULT 1 NOT NULL,
	"embedding" real[],
	"embedding_model" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_memory_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "agent_memory_scope" CHECK ("agent_memory"."scope" in ('user', 'thread')),
	CONSTRAINT "agent_memory_kind" CHECK ("agent_memory"."kind" in ('working', 'fact', 'recall')),
	CONSTRAINT "agent_memory_scope_owner" CHECK (("agent_memory"."scope" = 'user' and "agent_memory"."user_id" is not null and "agent_memory"."thread_id" is null) or ("agent_memory"."scope" = 'thread' and "agent_memory"."thread_id" is not null)),
	CONSTRAINT "agent_memory_recall_source" CHECK ("agent_memory"."kind" <> 'recall' or ("agent_memory"."scope" = 'thread' and "agent_memory"."source_message_id" is not null and "agent_memory"."source_content_version" is not null)),
	CONSTRAINT "agent_memory_embedding_model" CHECK (("agent_memory"."embedding" is null) = ("agent_memory"."embedding_model" is null)),
	CONSTRAINT "agent_memory_version_positive" CHECK ("agent_memory"."version" > 0)
);
--> statement-breakpoint
ALTER TABLE "agent_memory" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_memory" ADD CONSTRAINT "agent_memory_thread_fk" FOREIGN KEY ("tenant_id","thread_id") REFERENCES "public"."agent_thread"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_memory" ADD CONSTRAINT "agent_memory_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_memory" ADD CONSTRAINT "agent_memory_source_message_fk" FOREIGN KEY ("tenant_id","source_message_id") REFERENCES "public"."agent_message"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "agent_memory_user_working_uidx" ON "agent_memory" USING btree ("tenant_id","user_id") WHERE "agent_memory"."kind" = 'working' and "agent_memory"."scope" = 'user';--> statement-breakpoint
CREATE UNIQUE INDEX "agent_memory_thread_working_uidx" ON "agent_memory" USING btree ("tenant_id","thread_id") WHERE "agent_memory"."kind" = 'working' and "agent_memory"."scope" = 'thread';--> statement-breakpoint
CREATE UNIQUE INDEX "agent_memory_recall_message_uidx" ON "agent_memory" USING btree ("tenant_id","source_message_id") WHERE "agent_memory"."kind" = 'recall';--> statement-breakpoint
CREATE INDEX "agent_memory_user_kind_idx" ON "agent_memory" USING btree ("tenant_id","user_id","kind");--> statement-breakpoint
CREATE INDEX "agent_memory_thread_idx" ON "agent_memory" USING btree ("tenant_id","thread_id") WHERE "agent_memory"."thread_id" is not null;--> statement-breakpoint
CREATE INDEX "agent_memory_source_message_idx" ON "agent_memory" USING btree ("tenant_id","source_message_id") WHERE "agent_memory"."source_message_id" is not null;--> statement-breakpoint
CREATE POLICY "agent_memory_tenant_isolation" ON "agent_memory" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_memory"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_memory"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_memory"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_memory"."user_id" = nullif(current_setting('app.user_id', true), '')));