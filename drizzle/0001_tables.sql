CREATE TYPE "public"."agent_message_context_state" AS ENUM('eligible', 'excluded', 'redacted');--> statement-breakpoint
CREATE TYPE "public"."agent_message_role" AS ENUM('system', 'user', 'assistant');--> statement-breakpoint
CREATE TYPE "public"."agent_message_status" AS ENUM('pending', 'streaming', 'completed', 'failed', 'cancelled');--> statement-breakpoint
CREATE TYPE "public"."agent_run_status" AS ENUM('queued', 'running', 'completed', 'failed', 'cancelled');--> statement-breakpoint
CREATE TABLE "agent_audit_event" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid,
	"message_id" uuid,
	"user_id" text,
	"action" text NOT NULL,
	"actor" text NOT NULL,
	"reason" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_audit_event_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "agent_audit_event" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "agent_context_snapshot" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"user_id" text,
	"version" integer NOT NULL,
	"through_sequence" bigint NOT NULL,
	"summary_id" uuid,
	"included_sequences" jsonb NOT NULL,
	"pruned" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"budget" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"policy_version" text NOT NULL,
	"messages_hash" text NOT NULL,
	"step_number" integer,
	"stale" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_context_snapshot_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "agent_context_snapshot_version_positive" CHECK ("agent_context_snapshot"."version" > 0),
	CONSTRAINT "agent_context_snapshot_through_nonnegative" CHECK ("agent_context_snapshot"."through_sequence" >= 0)
);
--> statement-breakpoint
ALTER TABLE "agent_context_snapshot" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "agent_message" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"user_id" text,
	"run_id" uuid,
	"sequence" bigint NOT NULL,
	"message_id" text NOT NULL,
	"client_request_id" text,
	"source_message_id" uuid,
	"role" "agent_message_role" NOT NULL,
	"status" "agent_message_status" DEFAULT 'completed' NOT NULL,
	"parts" json DEFAULT '[]'::json NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"context_state" "agent_message_context_state" DEFAULT 'eligible' NOT NULL,
	"exclusion_reason" text,
	"pinned" boolean DEFAULT false NOT NULL,
	"schema_version" integer DEFAULT 2 NOT NULL,
	"content_version" integer DEFAULT 1 NOT NULL,
	"byte_size" integer DEFAULT 0 NOT NULL,
	"token_count" integer,
	"token_counter_id" text,
	"part_token_counts" integer[],
	"lease_expires_at" timestamp with time zone,
	"search_vector" "tsvector",
	"search_version" smallint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"redacted_at" timestamp with time zone,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "agent_message_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "agent_message_sequence_positive" CHECK ("agent_message"."sequence" > 0),
	CONSTRAINT "agent_message_parts_is_array" CHECK (json_typeof("agent_message"."parts") = 'array'),
	CONSTRAINT "agent_message_metadata_is_object" CHECK (jsonb_typeof("agent_message"."metadata") = 'object'),
	CONSTRAINT "agent_message_content_version_positive" CHECK ("agent_message"."content_version" > 0),
	CONSTRAINT "agent_message_message_id_length" CHECK (char_length("agent_message"."message_id") between 1 and 200),
	CONSTRAINT "agent_message_client_request_id_length" CHECK (char_length("agent_message"."client_request_id") between 1 and 200)
);
--> statement-breakpoint
ALTER TABLE "agent_message" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "agent_run" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"user_id" text,
	"status" "agent_run_status" DEFAULT 'running' NOT NULL,
	"provider" text,
	"model" text,
	"input_tokens" integer,
	"output_tokens" integer,
	"reasoning_tokens" integer,
	"cached_input_tokens" integer,
	"error" jsonb,
	"finish_reason" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_run_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "agent_run_thread_id_unique" UNIQUE("tenant_id","thread_id","id"),
	CONSTRAINT "agent_run_finished_after_started" CHECK ("agent_run"."finished_at" is null or "agent_run"."finished_at" >= "agent_run"."started_at")
);
--> statement-breakpoint
ALTER TABLE "agent_run" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
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
CREATE TABLE "agent_summary" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"user_id" text,
	"from_sequence" bigint NOT NULL,
	"through_sequence" bigint NOT NULL,
	"content" text NOT NULL,
	"token_count" integer NOT NULL,
	"token_counter_id" text,
	"summarizer_model" text,
	"policy_version" text NOT NULL,
	"previous_summary_id" uuid,
	"stale" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_summary_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "agent_summary_range" CHECK ("agent_summary"."from_sequence" >= 1 and "agent_summary"."through_sequence" >= "agent_summary"."from_sequence")
);
--> statement-breakpoint
ALTER TABLE "agent_summary" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "agent_thread" (
	"tenant_id" uuid NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"user_id" text,
	"title" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"next_sequence" bigint DEFAULT 0 NOT NULL,
	"last_message_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_activity_minute" timestamp with time zone GENERATED ALWAYS AS (date_bin('1 minute'::interval, last_message_at, '2000-01-01 00:00:00+00'::timestamptz)) STORED NOT NULL,
	"parent_thread_id" uuid,
	"forked_at_sequence" bigint,
	"root_thread_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "agent_thread_pk" PRIMARY KEY("tenant_id","id"),
	CONSTRAINT "agent_thread_user_unique" UNIQUE("tenant_id","id","user_id"),
	CONSTRAINT "agent_thread_next_sequence_nonnegative" CHECK ("agent_thread"."next_sequence" >= 0),
	CONSTRAINT "agent_thread_metadata_is_object" CHECK (jsonb_typeof("agent_thread"."metadata") = 'object')
);
--> statement-breakpoint
ALTER TABLE "agent_thread" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE TABLE "agent_tool_payload" (
	"tenant_id" uuid NOT NULL,
	"thread_id" uuid NOT NULL,
	"message_id" uuid NOT NULL,
	"user_id" text,
	"part" integer NOT NULL,
	"tool_call_id" text NOT NULL,
	"field" text NOT NULL,
	"chunk" integer NOT NULL,
	"chunk_count" integer NOT NULL,
	"byte_size" bigint NOT NULL,
	"digest" text NOT NULL,
	"content" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_tool_payload_pk" PRIMARY KEY("tenant_id","message_id","part","field","chunk"),
	CONSTRAINT "agent_tool_payload_field" CHECK ("agent_tool_payload"."field" in ('input', 'output', 'rawInput')),
	CONSTRAINT "agent_tool_payload_chunk_range" CHECK ("agent_tool_payload"."chunk" >= 0 and "agent_tool_payload"."chunk" < "agent_tool_payload"."chunk_count"),
	CONSTRAINT "agent_tool_payload_part_nonnegative" CHECK ("agent_tool_payload"."part" >= 0)
);
--> statement-breakpoint
ALTER TABLE "agent_tool_payload" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_context_snapshot" ADD CONSTRAINT "agent_context_snapshot_thread_fk" FOREIGN KEY ("tenant_id","thread_id") REFERENCES "public"."agent_thread"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_context_snapshot" ADD CONSTRAINT "agent_context_snapshot_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_message" ADD CONSTRAINT "agent_message_thread_fk" FOREIGN KEY ("tenant_id","thread_id") REFERENCES "public"."agent_thread"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_message" ADD CONSTRAINT "agent_message_run_fk" FOREIGN KEY ("tenant_id","thread_id","run_id") REFERENCES "public"."agent_run"("tenant_id","thread_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_message" ADD CONSTRAINT "agent_message_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_run" ADD CONSTRAINT "agent_run_thread_fk" FOREIGN KEY ("tenant_id","thread_id") REFERENCES "public"."agent_thread"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_run" ADD CONSTRAINT "agent_run_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_stream_chunk" ADD CONSTRAINT "agent_stream_chunk_message_fk" FOREIGN KEY ("tenant_id","message_id") REFERENCES "public"."agent_message"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_stream_chunk" ADD CONSTRAINT "agent_stream_chunk_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_summary" ADD CONSTRAINT "agent_summary_thread_fk" FOREIGN KEY ("tenant_id","thread_id") REFERENCES "public"."agent_thread"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_summary" ADD CONSTRAINT "agent_summary_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tool_payload" ADD CONSTRAINT "agent_tool_payload_message_fk" FOREIGN KEY ("tenant_id","message_id") REFERENCES "public"."agent_message"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tool_payload" ADD CONSTRAINT "agent_tool_payload_thread_user_fk" FOREIGN KEY ("tenant_id","thread_id","user_id") REFERENCES "public"."agent_thread"("tenant_id","id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_audit_event_thread_idx" ON "agent_audit_event" USING btree ("tenant_id","thread_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "agent_context_snapshot_thread_version_uidx" ON "agent_context_snapshot" USING btree ("tenant_id","thread_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "agent_message_thread_sequence_uidx" ON "agent_message" USING btree ("tenant_id","thread_id","sequence");--> statement-breakpoint
CREATE UNIQUE INDEX "agent_message_thread_message_id_uidx" ON "agent_message" USING btree ("tenant_id","thread_id","message_id");--> statement-breakpoint
CREATE UNIQUE INDEX "agent_message_client_request_uidx" ON "agent_message" USING btree ("tenant_id","thread_id","client_request_id") WHERE "agent_message"."client_request_id" is not null;--> statement-breakpoint
CREATE INDEX "agent_message_pinned_idx" ON "agent_message" USING btree ("tenant_id","thread_id","sequence") WHERE "agent_message"."pinned";--> statement-breakpoint
CREATE INDEX "agent_message_source_idx" ON "agent_message" USING btree ("tenant_id","source_message_id") WHERE "agent_message"."source_message_id" is not null;--> statement-breakpoint
CREATE INDEX "agent_message_run_idx" ON "agent_message" USING btree ("tenant_id","thread_id","run_id") WHERE "agent_message"."run_id" is not null;--> statement-breakpoint
CREATE INDEX "agent_message_streaming_lease_idx" ON "agent_message" USING btree ("tenant_id","lease_expires_at") WHERE "agent_message"."status" in ('pending', 'streaming');--> statement-breakpoint
CREATE INDEX "agent_message_search_idx" ON "agent_message" USING gin ("search_vector") WHERE "agent_message"."search_vector" is not null;--> statement-breakpoint
CREATE INDEX "agent_message_search_pending_idx" ON "agent_message" USING btree ("tenant_id","thread_id") WHERE "agent_message"."search_vector" is null;--> statement-breakpoint
CREATE INDEX "agent_run_thread_created_idx" ON "agent_run" USING btree ("tenant_id","thread_id","created_at");--> statement-breakpoint
CREATE INDEX "agent_stream_chunk_thread_idx" ON "agent_stream_chunk" USING btree ("tenant_id","thread_id");--> statement-breakpoint
CREATE INDEX "agent_summary_thread_through_idx" ON "agent_summary" USING btree ("tenant_id","thread_id","through_sequence");--> statement-breakpoint
CREATE INDEX "agent_thread_user_recent_idx" ON "agent_thread" USING btree ("tenant_id","user_id","last_activity_minute" DESC NULLS LAST) WHERE "agent_thread"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "agent_thread_recent_idx" ON "agent_thread" USING btree ("tenant_id","last_activity_minute" DESC NULLS LAST) WHERE "agent_thread"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "agent_thread_root_idx" ON "agent_thread" USING btree ("tenant_id","root_thread_id") WHERE "agent_thread"."root_thread_id" is not null;--> statement-breakpoint
CREATE INDEX "agent_tool_payload_thread_idx" ON "agent_tool_payload" USING btree ("tenant_id","thread_id");--> statement-breakpoint
CREATE POLICY "agent_audit_event_tenant_isolation" ON "agent_audit_event" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_audit_event"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_audit_event"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_audit_event"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_audit_event"."user_id" = nullif(current_setting('app.user_id', true), '')));--> statement-breakpoint
CREATE POLICY "agent_context_snapshot_tenant_isolation" ON "agent_context_snapshot" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_context_snapshot"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_context_snapshot"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_context_snapshot"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_context_snapshot"."user_id" = nullif(current_setting('app.user_id', true), '')));--> statement-breakpoint
CREATE POLICY "agent_message_tenant_isolation" ON "agent_message" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_message"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_message"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_message"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_message"."user_id" = nullif(current_setting('app.user_id', true), '')));--> statement-breakpoint
CREATE POLICY "agent_run_tenant_isolation" ON "agent_run" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_run"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_run"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_run"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_run"."user_id" = nullif(current_setting('app.user_id', true), '')));--> statement-breakpoint
CREATE POLICY "agent_stream_chunk_tenant_isolation" ON "agent_stream_chunk" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_stream_chunk"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_stream_chunk"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_stream_chunk"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_stream_chunk"."user_id" = nullif(current_setting('app.user_id', true), '')));--> statement-breakpoint
CREATE POLICY "agent_summary_tenant_isolation" ON "agent_summary" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_summary"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_summary"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_summary"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_summary"."user_id" = nullif(current_setting('app.user_id', true), '')));--> statement-breakpoint
CREATE POLICY "agent_thread_tenant_isolation" ON "agent_thread" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_thread"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_thread"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_thread"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_thread"."user_id" = nullif(current_setting('app.user_id', true), '')));--> statement-breakpoint
CREATE POLICY "agent_tool_payload_tenant_isolation" ON "agent_tool_payload" AS PERMISSIVE FOR ALL TO "agent_history_app" USING ("agent_tool_payload"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_tool_payload"."user_id" = nullif(current_setting('app.user_id', true), ''))) WITH CHECK ("agent_tool_payload"."tenant_id" = nullif(current_setting('app.tenant_id', true), '')::uuid and (nullif(current_setting('app.user_id', true), '') is null or "agent_tool_payload"."user_id" = nullif(current_setting('app.user_id', true), '')));