#!/usr/bin/env bash
# Arize Phoenix (PyPI arize-phoenix) in the project venv, idempotently: an OpenTelemetry
# receiver and trace viewer that `harness trace --otlp` and `harness dev` export to, and that
# test/cli/trace-otlp.test.ts reads spans back from. Installs nothing when the pinned version
# is already there. Start it offline, bound to 127.0.0.1, with `npm run phoenix` (scripts/phoenix.sh).
#   PHOENIX_VERSION   the version to install (default below)
set -euo pipefail
cd "$(dirname "$0")/.."

PHOENIX_VERSION="${PHOENIX_VERSION:-20.26.1}"
say() { printf '[phoenix] %s\n' "$*"; }

# The installed version, read from package metadata (importing phoenix itself takes seconds).
installed() {
  [ -x .venv/bin/phoenix ] || return 1
  .venv/bin/python -c 'import importlib.metadata as m; print(m.version("arize-phoenix"))' 2>/dev/null
}

if [ "$(installed || true)" = "$PHOENIX_VERSION" ]; then
  say "already installed: arize-phoenix $PHOENIX_VERSION"
  exit 0
fi
command -v python3 >/dev/null || { echo "[phoenix] error: python3 is required" >&2; exit 1; }
[ -x .venv/bin/pip ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check "arize-phoenix==${PHOENIX_VERSION}"
say "installed: arize-phoenix $(installed)"
