/** What `agent-history --help` prints. */
export const USAGE = `Usage: agent-history <command> [options]

Adds agent-history's SQL to your drizzle-kit project, applies it, and checks a database.

  generate   Add the package's custom migrations to your drizzle-kit migrations folder, around your own:
             the application role first, then your schema's changes (drizzle-kit generate), then row-level
             security, grants and functions. Run it on install and again after each upgrade: it adds only
             what is missing, and nothing when nothing is.
    --out <folder>        your migrations folder (default: the \`out\` of drizzle.config.*, else ./drizzle)
    --config <file>       your drizzle config (default: drizzle.config.{ts,mts,js,mjs})
    --schema <name>       the Postgres schema of defineAgentTables({ schema }) (default: public)
    --app-role <name>     the application role of defineAgentTables({ appRole }) (default: agent_history_app)
    --role-exists         add no role migration: an administrator creates the role on every cluster
    -- <args>             passed to drizzle-kit generate (for your schema's changes)

  migrate    Apply your drizzle-kit migrations folder with drizzle-orm's migrator, in one transaction, as
             drizzle-kit migrate does (same migrations table), printing Postgres's error, code and hint when
             a migration fails (drizzle-kit 0.31 can exit 1 printing nothing:
             https://github.com/drizzle-team/drizzle-orm/issues/5816). Run it as the tables' owner.
    --url <url>                   default: $DATABASE_URL
    --folder <folder>             default: as generate's --out
    --config <file>               where to read the folder from
    --migrations-table <name>     default: __drizzle_migrations
    --migrations-schema <name>    default: drizzle
    --check                       then run check for the same login (with --schema, --app-role)

  check      Check, for the login of the URL, that the store can run: the migrations ran, the application
             role exists and the login may switch to it, row-level security holds. Prints each problem with
             the SQL that fixes it; exits 1 if there is one.
    --url <url>           default: $DATABASE_URL
    --schema <name>       default: public
    --app-role <name>     default: agent_history_app

Exit codes: 0 done (and --help), 1 failed (the reason is printed), 2 a wrong command line.
`;
