#!/usr/bin/env bash
# End-to-end test of the example in headless Chromium: installs what it needs, builds the app, starts a throwaway
# PostgreSQL 15 on loopback, migrates it as its owner, starts the app on a free loopback port as a NOINHERIT login
# with the scripted model, and drives it (e2e/chat.e2e.ts). E2E_DATABASE=pglite: the embedded PGlite instead.
# Run from anywhere: bash examples/nextjs/e2e/run.sh   (after `npm ci` at the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
APP_DIR="$(pwd)"
ROOT_DIR="$(cd ../.. && pwd)"
# The repository's own Node 22 (a devDependency at the root) comes first, for npm, next and the test.
export PATH="$ROOT_DIR/node_modules/.bin:$PATH"
export NEXT_TELEMETRY_DISABLED=1

if [ ! -x /usr/bin/chromium ]; then
  echo "e2e: installing Debian's chromium…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if [ "${E2E_DATABASE:-postgres}" = postgres ] && [ ! -x /usr/lib/postgresql/15/bin/initdb ] && [ -z "${PG_BIN:-}" ]; then
  echo "e2e: installing Debian's postgresql-15…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
fi

echo "e2e: building agent-history (the example installs the packed package)…"
(cd "$ROOT_DIR" && npm run build --silent)

echo "e2e: npm ci in examples/nextjs…"
npm ci --prefer-offline --no-audit --no-fund --loglevel=error

echo "e2e: next build…"
# `next build` itself: the e2e migrates its own database (`npm run db:migrate`) once it has started it.
npx next build > "$APP_DIR/e2e/.next-build.log" 2>&1 || { tail -50 "$APP_DIR/e2e/.next-build.log"; exit 1; }

echo "e2e: driving the app in Chromium…"
tsx e2e/chat.e2e.ts
