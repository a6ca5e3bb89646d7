#!/usr/bin/env bash
# Debian's Chromium for the console's browser tests (test/console/*.browser.test.ts drive it with
# playwright-core, a devDependency that downloads no browser of its own), idempotently: nothing
# is installed when /usr/bin/chromium is there. The tests launch it headless, offline, with a
# fresh profile each time.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[browser] %s\n' "$*"; }

if [ -x /usr/bin/chromium ]; then
  say "already installed: $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "[browser] error: need root or sudo to install chromium" >&2; exit 1; }
  SUDO=sudo
fi
# An empty package index (fresh container images ship none) makes apt-get install fail.
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
  $SUDO apt-get update -qq
fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
say "installed: $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
