-- The application role, before the tables: their policies name it. Roles are cluster-wide, so it is created only
-- when it does not exist yet (a second database of the same cluster, or an administrator made it beforehand).
-- NOLOGIN: the pool logs in as its own role, a member of this one, and every store transaction switches to it with
-- set_config('role', …, true). A login without CREATEROLE cannot create it: the error names the statement an
-- administrator runs once, after which this migration passes.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'agent_history_app') THEN
    BEGIN
      CREATE ROLE "agent_history_app" NOLOGIN;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE EXCEPTION 'agent-history: the role "agent_history_app" does not exist, and % may not create it', current_user
        USING ERRCODE = 'insufficient_privilege',
          HINT = 'As a role with CREATEROLE, run once: CREATE ROLE "agent_history_app" NOLOGIN; then run the migrations again.';
    END;
  END IF;
END
$$;
