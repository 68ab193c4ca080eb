-- Roles are cluster-wide: create the application role only when it does not exist yet, so the
-- migrations apply to a second database of the same cluster. NOLOGIN: the pool logs in as its own role,
-- a member of this one, and every store transaction switches to it with set_config('role', …, true).
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent_history_app') THEN
    CREATE ROLE "agent_history_app" NOLOGIN;
  END IF;
END
$$;
