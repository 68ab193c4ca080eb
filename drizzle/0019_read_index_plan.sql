-- The one-statement reads of 0013 run with enable_sort = off (for the function's run only). The user-scope clause of
-- the row-level security policy (nullif(current_setting('app.user_id', true), '') IS NULL OR user_id = …) gets the
-- planner's default selectivity (0.5 %), so on a table where one thread holds most rows the planner expected a few
-- dozen visible rows and found a sequential scan and a sort of the whole thread cheaper than walking the
-- (tenant_id, thread_id, sequence) index backwards to the page's LIMIT: 12-15 ms of server CPU for a page of a
-- 10,000-message thread instead of about 1 ms. The setting only makes a sort look expensive: a query with no other
-- way to its order still sorts. Same signatures, so a server running the previous release calls them unchanged.
ALTER FUNCTION "public"."agent_history_list_messages"(uuid, text, text, uuid, bigint, integer, text[], boolean) SET enable_sort = off;
--> statement-breakpoint
ALTER FUNCTION "public"."agent_history_load_context"(uuid, text, text, uuid, integer) SET enable_sort = off;
