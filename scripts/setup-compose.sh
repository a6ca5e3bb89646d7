#!/usr/bin/env bash
# A compose implementation for docker-compose.yml, idempotently: Debian's `docker-compose`
# package (Compose 1.29, Python) from the machine's own apt mirror, when neither
# `docker-compose` nor the `docker compose` plugin is there. It reads, validates and runs the
# same file (test/deploy/compose.test.ts validates it with `docker-compose config`; the Debian
# package needs no image registry and no download outside the Debian mirror). Safe to run again.
#   HARNESS_SKIP_DOCKER=1   skip (machines where Docker is managed elsewhere), as setup-docker.sh
set -euo pipefail

say() { printf '[compose] %s\n' "$*"; }
die() { printf '[compose] error: %s\n' "$*" >&2; exit 1; }

if [ "${HARNESS_SKIP_DOCKER:-0}" = 1 ]; then say "skipped (HARNESS_SKIP_DOCKER=1)"; exit 0; fi

if command -v docker-compose >/dev/null 2>&1 && docker-compose version --short >/dev/null 2>&1; then
  say "docker-compose $(docker-compose version --short) present"
  exit 0
fi
if docker compose version >/dev/null 2>&1; then
  say "docker compose plugin present ($(docker compose version --short 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

command -v apt-get >/dev/null || die "no apt-get: install Docker Compose yourself (https://docs.docker.com/compose/install/)"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "need root (or sudo) to install docker-compose (apt-get install docker-compose)"
  SUDO="sudo"
fi

say "installing Debian's docker-compose"
# An empty package index (fresh container images ship none) makes apt-get install fail.
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
  $SUDO apt-get update -qq
fi
# --no-install-recommends: it recommends docker.io, which setup-docker.sh installs (or not) itself.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null \
  || die "apt-get install docker-compose failed"
docker-compose version --short >/dev/null 2>&1 || die "docker-compose was installed but does not run"
say "docker-compose $(docker-compose version --short) installed"
