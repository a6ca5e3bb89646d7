#!/usr/bin/env bash
# Test-only image: the sandbox image plus strace, for the policy's differential test
# (test/deterministic/policy/differential.test.ts, npm run fuzz:policy). The production image is untouched.
#
# Offline like build-rootfs.sh: strace and the shared libraries it needs that the sandbox image
# lacks come from this machine's Debian mirror (`apt-get download`), are unpacked with
# `dpkg-deb -x`, and a two-line Dockerfile COPYs them onto the sandbox image. No RUN step: the
# image has no package lists and builds need no network.
#
# Usage: sandbox/build-trace-image.sh [--force]
#   HARNESS_SANDBOX_IMAGE  the base (default harness-sandbox:latest)
#   HARNESS_TRACE_IMAGE    tag to build (default harness-sandbox-trace:latest)
# Idempotent and quick when done: the image carries the id of the sandbox image it was built
# from (label harness.trace.base) and is rebuilt only when that id changes.
set -euo pipefail

BASE="${HARNESS_SANDBOX_IMAGE:-harness-sandbox:latest}"
IMAGE="${HARNESS_TRACE_IMAGE:-harness-sandbox-trace:latest}"
WANTED=(strace)
LABEL=harness.trace.base
FORCE="${FORCE:-0}"
[ "${1:-}" = "--force" ] && FORCE=1

say() { printf '[trace-image] %s\n' "$*"; }
die() { printf '[trace-image] error: %s\n' "$*" >&2; exit 1; }

command -v docker >/dev/null || die "docker client not found (run scripts/setup-docker.sh)"
base_id="$(docker image inspect --format '{{.Id}}' "$BASE" 2>/dev/null)" || die "base image $BASE missing (run scripts/setup-docker.sh)"
built_from="$(docker image inspect --format "{{index .Config.Labels \"$LABEL\"}}" "$IMAGE" 2>/dev/null || true)"
if [ "$FORCE" != 1 ] && [ "$built_from" = "$base_id" ]; then
  say "image $IMAGE is up to date with $BASE"
  exit 0
fi
old_id="$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
chmod 755 "$STAGE"

# What the base image already has: its dpkg database, and which top-level folders are links
# into /usr (merged /usr: a COPY of a real /lib folder would replace the link and break it).
docker run --rm --network none --user 0 "$BASE" sh -c \
  'dpkg-query -W -f "pkg \${Package}\n"; for d in bin sbin lib lib32 lib64 libx32; do [ -L "/$d" ] && echo "merged $d"; done; true' \
  >"$STAGE/probe" || die "cannot list the packages of $BASE"

# An empty package index (fresh machines ship none) makes apt-cache and apt-get download fail.
if ! apt-cache show "${WANTED[0]}" >/dev/null 2>&1; then
  say "apt-get update (no package index)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq; else sudo apt-get update -qq; fi
fi

# The closure of Depends/Pre-Depends that the image lacks. Alternatives (`a | b`) are all
# taken: an extra library is harmless, a missing one breaks strace.
need=()
queue=("${WANTED[@]}")
declare -A seen=()
while [ ${#queue[@]} -gt 0 ]; do
  pkg="${queue[0]}"
  queue=("${queue[@]:1}")
  [ -n "${seen[$pkg]:-}" ] && continue
  seen[$pkg]=1
  grep -qxF "pkg $pkg" "$STAGE/probe" && continue
  need+=("$pkg")
  while read -r dep; do queue+=("$dep"); done < <(
    apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "$pkg" |
      awk '$1 ~ /^\|?(Pre)?Depends:$/ && $2 !~ /^</ { sub(/:.*/, "", $2); print $2 }'
  )
done
say "adding to $BASE: ${need[*]}"

mkdir -p "$STAGE/debs" "$STAGE/ctx/root"
# As root, apt drops to the _apt user, which cannot write this folder; downloading needs no sandbox.
sandbox_opt=()
[ "$(id -u)" = 0 ] && sandbox_opt=(-o APT::Sandbox::User=root)
(cd "$STAGE/debs" && apt-get download -qq "${sandbox_opt[@]}" "${need[@]}") || die "apt-get download ${need[*]} failed"
for deb in "$STAGE"/debs/*.deb; do dpkg-deb -x "$deb" "$STAGE/ctx/root"; done

root="$STAGE/ctx/root"
while read -r kind d; do
  [ "$kind" = merged ] && [ -d "$root/$d" ] && [ ! -L "$root/$d" ] || continue
  mkdir -p "$root/usr/$d"
  cp -a "$root/$d/." "$root/usr/$d/"
  rm -rf "${root:?}/$d"
done <"$STAGE/probe"
# A test image reads no documentation.
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" "$root/usr/share/bug" "$root/usr/share/info"

cat >"$STAGE/ctx/Dockerfile" <<'EOF'
ARG BASE
FROM ${BASE}
COPY root/ /
EOF

# Clients without buildx still build with the classic builder when asked to.
docker buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
docker build -q --build-arg "BASE=$BASE" --label "$LABEL=$base_id" -t "$IMAGE" "$STAGE/ctx" >/dev/null 2>"$STAGE/build.log" \
  || { cat "$STAGE/build.log" >&2; die "docker build failed"; }

# strace must start, find every library, and trace under the sandbox's own restrictions.
missing="$(docker run --rm --network none "$IMAGE" sh -c 'ldd /usr/bin/strace | grep "not found" || true')"
[ -z "$missing" ] || die "strace lacks libraries in $IMAGE: $missing"
docker run --rm --network none --read-only --cap-drop ALL --security-opt no-new-privileges --user 1000:1000 "$IMAGE" \
  strace -f -qq --seccomp-bpf -o /dev/null -e trace=execve bash --noprofile --norc -c 'ls / >/dev/null' \
  || die "strace cannot trace in $IMAGE under the sandbox's restrictions"

new_id="$(docker image inspect --format '{{.Id}}' "$IMAGE")"
# The image this one replaces is only ever used by the tests: drop it rather than leave it dangling.
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then docker rmi "$old_id" >/dev/null 2>&1 || true; fi
say "built $IMAGE ($(docker run --rm --network none "$IMAGE" strace -V | head -n1))"
