ALTER TABLE "agent_message" ADD COLUMN "source_message_id" uuid;--> statement-breakpoint
ALTER TABLE "agent_thread" ADD COLUMN "root_thread_id" uuid;--> statement-breakpoint
CREATE INDEX "agent_message_source_idx" ON "agent_message" USING btree ("tenant_id","source_message_id") WHERE "agent_message"."source_message_id" is not null;--> statement-breakpoint
CREATE INDEX "agent_thread_root_idx" ON "agent_thread" USING btree ("tenant_id","root_thread_id") WHERE "agent_thread"."root_thread_id" is not null;--> statement-breakpoint
-- Backfill for forks made before this migration, as far as the old rows allow. A fork's copies are the rows of the
-- fork at or before its fork point, with the message id and sequence of a row of the parent thread: each first
-- points at that parent row, then the pointers are followed up to the original (one level per pass). A copy whose
-- parent thread was deleted before this migration cannot be traced and stays an original of its own.
-- Row-level security is forced on these tables and no policy applies to the owner that runs migrations: it is lifted
-- for the backfill and forced again at its end, in the migration's transaction.
ALTER TABLE "agent_message" NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_thread" NO FORCE ROW LEVEL SECURITY;--> statement-breakpoint
UPDATE "agent_message" AS "copy" SET "source_message_id" = "parent"."id"
FROM "agent_thread" AS "fork", "agent_message" AS "parent"
WHERE "copy"."source_message_id" IS NULL
  AND "fork"."tenant_id" = "copy"."tenant_id" AND "fork"."id" = "copy"."thread_id"
  AND "fork"."parent_thread_id" IS NOT NULL AND "copy"."sequence" <= "fork"."forked_at_sequence"
  AND "parent"."tenant_id" = "copy"."tenant_id" AND "parent"."thread_id" = "fork"."parent_thread_id"
  AND "parent"."sequence" = "copy"."sequence" AND "parent"."message_id" = "copy"."message_id";--> statement-breakpoint
UPDATE "agent_thread" SET "root_thread_id" = "parent_thread_id"
WHERE "parent_thread_id" IS NOT NULL AND "root_thread_id" IS NULL;--> statement-breakpoint
DO $$
BEGIN
  FOR pass IN 1..10000 LOOP
    UPDATE "agent_message" AS "copy" SET "source_message_id" = "parent"."source_message_id"
    FROM "agent_message" AS "parent"
    WHERE "parent"."tenant_id" = "copy"."tenant_id" AND "parent"."id" = "copy"."source_message_id"
      AND "parent"."source_message_id" IS NOT NULL;
    EXIT WHEN NOT FOUND;
  END LOOP;
  FOR pass IN 1..10000 LOOP
    UPDATE "agent_thread" AS "fork" SET "root_thread_id" = "parent"."root_thread_id"
    FROM "agent_thread" AS "parent"
    WHERE "parent"."tenant_id" = "fork"."tenant_id" AND "parent"."id" = "fork"."root_thread_id"
      AND "parent"."root_thread_id" IS NOT NULL;
    EXIT WHEN NOT FOUND;
  END LOOP;
END $$;--> statement-breakpoint
ALTER TABLE "agent_message" FORCE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "agent_thread" FORCE ROW LEVEL SECURITY;
