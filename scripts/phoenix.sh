#!/usr/bin/env bash
# Arize Phoenix (scripts/setup-phoenix.sh installs it into .venv) started offline and reachable
# from this machine only (`npm run phoenix`). Phoenix's own default is every interface (0.0.0.0)
# with no login, which would show every trace it receives to the whole network.
#   PHOENIX_HOST       the address it binds, UI, OTLP/HTTP and OTLP/gRPC alike (default 127.0.0.1)
#   PHOENIX_PORT       the UI and OTLP/HTTP, what `harness trace --otlp` sends to (default 6006)
#   PHOENIX_GRPC_PORT  OTLP/gRPC, which the harness does not use (default 4317)
#   PHOENIX_WORKING_DIR  its data (default ~/.phoenix)
# Arguments are passed to `phoenix serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/phoenix ] || { echo "error: Phoenix is not installed (.venv/bin/phoenix)" >&2; echo "hint: run \`npm run setup\` (or bash scripts/setup-phoenix.sh)" >&2; exit 1; }
export PHOENIX_HOST="${PHOENIX_HOST:-127.0.0.1}"
export PHOENIX_PORT="${PHOENIX_PORT:-6006}"
export PHOENIX_TELEMETRY_ENABLED="${PHOENIX_TELEMETRY_ENABLED:-false}"
export PHOENIX_ALLOW_EXTERNAL_RESOURCES="${PHOENIX_ALLOW_EXTERNAL_RESOURCES:-false}"
echo "[phoenix] http://${PHOENIX_HOST}:${PHOENIX_PORT} (PHOENIX_HOST, PHOENIX_PORT set others)" >&2
exec .venv/bin/python scripts/phoenix-serve.py serve "$@"
