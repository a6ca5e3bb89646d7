#!/usr/bin/env bash
# Offline build of the sandbox image: no image registry is needed, only the Debian mirror
# this machine already uses. debootstrap makes a minimal bookworm rootfs (shell, coreutils,
# grep, sed, find, procps, python3, and bash's loadable builtins, which let the command wrapper
# make and remove a command's scratch folder without a process each), we add the non-root user `agent` (uid 1000) and
# /workspace, trim what a sandbox never reads, then `docker import` it.
#
# Usage: sandbox/build-rootfs.sh [--force | --up-to-date]
#   HARNESS_SANDBOX_IMAGE  tag to build (default harness-sandbox:latest)
#   HARNESS_SANDBOX_CACHE  where the rootfs tarball is kept (default /var/cache/harness-sandbox)
#   DEBIAN_MIRROR          override the mirror read from /etc/apt/sources.list(.d)
# Idempotent: skips when the image exists and was built from this suite and package list (its
# label harness.rootfs); re-imports the cached tarball when only the image is gone or outdated.
# An image under another tag without that label is someone's own build and is left alone.
# --force (or FORCE=1) rebuilds from scratch. --up-to-date only answers (exit 0 when nothing
# is to do), without root.
set -euo pipefail

IMAGE="${HARNESS_SANDBOX_IMAGE:-harness-sandbox:latest}"
SUITE=bookworm
PACKAGES=python3,coreutils,grep,sed,findutils,procps,bash-builtins
CACHE="${HARNESS_SANDBOX_CACHE:-/var/cache/harness-sandbox}"
# The cache key names the suite and packages, so changing either rebuilds.
KEY="$SUITE-$(printf '%s' "$PACKAGES" | md5sum | cut -c1-8)"
TARBALL="$CACHE/rootfs-$KEY.tar"
FORCE="${FORCE:-0}"
[ "${1:-}" = "--force" ] && FORCE=1

say() { printf '[sandbox] %s\n' "$*"; }
die() { printf '[sandbox] error: %s\n' "$*" >&2; exit 1; }

command -v docker >/dev/null || die "docker client not found (run scripts/setup-docker.sh)"
docker info >/dev/null 2>&1 || die "Docker Engine is not answering (run scripts/setup-docker.sh)"

# Nothing to do: the image is this build's, or an image of the user's own under another tag.
up_to_date() {
  local built
  built="$(docker image inspect --format '{{index .Config.Labels "harness.rootfs"}}' "$IMAGE" 2>/dev/null)" || return 1
  [ "$built" = "$KEY" ] || { [ -z "$built" ] && [ "$IMAGE" != harness-sandbox:latest ]; }
}
if [ "${1:-}" = "--up-to-date" ]; then up_to_date; exit; fi
if [ "$FORCE" != 1 ] && up_to_date; then
  say "image $IMAGE is up to date (use --force to rebuild)"
  exit 0
fi

# The first mirror of the machine's own apt sources that serves $SUITE itself (not -updates
# or -security). Handles both deb822 (.sources) and one-line (.list) formats.
debian_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$SUITE" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
      if ($(i + 1) == s) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: stanzas separated by blank lines; take URIs of a stanza whose Suites lists $SUITE.
    awk -v s="$SUITE" 'BEGIN { RS = ""; FS = "\n" }
      { uri = ""; ok = 0; deb = 1
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { split($i, a, /[ \t]+/); uri = a[2] }
          if ($i ~ /^Types:/ && $i !~ /(^|[ \t])deb([ \t]|$)/) deb = 0
          if ($i ~ /^Suites:/) { n = split($i, b, /[ \t]+/); for (j = 2; j <= n; j++) if (b[j] == s) ok = 1 }
          if ($i ~ /^Enabled:[ \t]*no/) deb = 0
        }
        if (ok && deb && uri != "") { print uri; exit } }' "$f"
  done
}

if [ "$FORCE" = 1 ] || [ ! -s "$TARBALL" ]; then
  command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap)"
  MIRROR="${DEBIAN_MIRROR:-$(debian_mirror | head -n1)}"
  [ -n "$MIRROR" ] || die "no Debian $SUITE mirror in /etc/apt/sources.list(.d); set DEBIAN_MIRROR"
  mkdir -p "$CACHE"
  ROOT="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
  trap 'rm -rf "$ROOT"' EXIT
  say "debootstrap $SUITE from $MIRROR into $ROOT (a few minutes)"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (full log: $CACHE/debootstrap.log)"; }

  say "adding user agent (uid 1000) and /workspace"
  chroot "$ROOT" groupadd --gid 1000 agent
  chroot "$ROOT" useradd --uid 1000 --gid 1000 --home-dir /workspace --no-create-home --shell /bin/sh agent
  mkdir -p "$ROOT/workspace"
  chown 1000:1000 "$ROOT/workspace"

  say "trimming (apt lists, caches, docs, man pages, locales, logs)"
  # A sandbox never installs packages or reads documentation: this roughly halves the image.
  rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/* "$ROOT"/var/cache/debconf/*-old \
    "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
    "$ROOT"/usr/share/locale/* "$ROOT"/usr/share/lintian "$ROOT"/var/log/* "$ROOT"/debootstrap
  find "$ROOT" -name __pycache__ -type d -prune -exec rm -rf {} +
  # Mount points Docker provides at run time; their contents in the rootfs are never seen.
  rm -rf "$ROOT"/dev/* "$ROOT"/proc/* "$ROOT"/sys/* "$ROOT"/tmp/* "$ROOT"/run/*

  say "packing $TARBALL"
  tar -C "$ROOT" --numeric-owner -cf "$TARBALL.part" .
  mv "$TARBALL.part" "$TARBALL"
  rm -rf "$ROOT"
  trap - EXIT
else
  say "using cached rootfs $TARBALL"
fi

say "docker import -> $IMAGE"
docker import \
  --change 'USER agent' \
  --change 'WORKDIR /workspace' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'LABEL harness.sandbox=true' \
  --change "LABEL harness.rootfs=$KEY" \
  --change 'CMD ["sleep", "infinity"]' \
  - "$IMAGE" <"$TARBALL" >/dev/null
say "built $IMAGE ($(docker image inspect --format '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
