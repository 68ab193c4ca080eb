import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';

const config: NextConfig = {
  // This folder is the app's root (it has its own lockfile), not the repository above it.
  turbopack: { root: fileURLToPath(new URL('.', import.meta.url)) },
  // Loaded by Node at run time, not bundled: PGlite reads its WebAssembly files next to its package, and
  // agent-history finds its shipped migrations (drizzle/) next to its own files.
  serverExternalPackages: ['@electric-sql/pglite', 'agent-history', 'postgres', 'drizzle-orm'],
};

export default config;
