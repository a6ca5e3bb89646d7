#!/bin/sh
# One-shot (docker-compose.yml: temporal-schema, image temporalio/admin-tools): creates Temporal's
# two Postgres databases and brings both schemas to the version this admin-tools image ships.
# Idempotent: an existing database is kept, setup-schema only adds the version tables when they
# are missing, and update-schema applies only the versions not applied yet. So the same job
# upgrades the schema when TEMPORAL_VERSION moves on (run it before the new server starts).
#   SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD   the connection (read by temporal-sql-tool itself)
#   TEMPORAL_DB, TEMPORAL_VISIBILITY_DB          the database names (temporal, temporal_visibility)
set -eu

schema=/etc/temporal/schema/postgresql/v12
tool() { temporal-sql-tool --plugin postgres12 "$@"; }

for pair in "${TEMPORAL_DB:-temporal}:temporal" "${TEMPORAL_VISIBILITY_DB:-temporal_visibility}:visibility"; do
  db="${pair%%:*}"
  store="${pair##*:}"
  echo "== $db ($store store)"
  # create-database fails when the database exists; only that failure is expected.
  if out="$(tool --db "$db" create-database 2>&1)"; then
    echo "created database $db"
  elif printf '%s' "$out" | grep -q 'already exists'; then
    echo "database $db exists"
  else
    printf '%s\n' "$out" >&2
    echo "error: could not create database $db on $SQL_HOST:$SQL_PORT" >&2
    exit 1
  fi
  tool --db "$db" setup-schema -v 0.0
  # The versioned/ folder itself: pointed at its parent, update-schema finds nothing and exits 0.
  tool --db "$db" update-schema -d "$schema/$store/versioned"
done
echo "Temporal schema is up to date"
