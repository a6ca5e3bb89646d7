#!/bin/sh
# One-shot (docker-compose.yml: temporal-namespace, image temporalio/admin-tools): waits for the
# Temporal frontend, then registers the harness's namespace when it is missing. The plain server
# image creates none (the deprecated auto-setup image used to create `default`).
#   TEMPORAL_ADDRESS     the frontend (temporal:7233)
#   TEMPORAL_NAMESPACE   the namespace (default)
#   TEMPORAL_RETENTION   how long closed workflows (ended sessions, their turns) are kept (168h)
set -eu

ns="${TEMPORAL_NAMESPACE:-default}"
tries=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 90 ]; then
    echo "error: the Temporal frontend at $TEMPORAL_ADDRESS did not become healthy within 3 minutes" >&2
    temporal operator cluster health --address "$TEMPORAL_ADDRESS" >&2 || true
    exit 1
  fi
  sleep 2
done
if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$ns" >/dev/null 2>&1; then
  echo "namespace $ns exists"
else
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$ns" --retention "${TEMPORAL_RETENTION:-168h}"
  echo "namespace $ns created"
fi
