// node-postgres ships no types and @types/pg is not a devDependency: the suite uses only `new pg.Pool(…)`, `on` and `end`.
declare module 'pg';
