#!/usr/bin/env bash
# Docker for the sandbox, idempotently: install Debian's docker.io (and debootstrap) when the
# engine is missing, start dockerd when it does not answer (these machines have no systemd),
# then build the sandbox image offline when it is missing or outdated. Safe to run again at any time.
#   HARNESS_SKIP_DOCKER=1   skip everything (machines where Docker is managed elsewhere)
#   DOCKERD_FLAGS           extra dockerd flags, tried first (e.g. "--storage-driver=vfs")
set -euo pipefail
cd "$(dirname "$0")/.."

LOG=/var/log/dockerd.log
say() { printf '[docker] %s\n' "$*"; }
die() { printf '[docker] error: %s\n' "$*" >&2; exit 1; }

if [ "${HARNESS_SKIP_DOCKER:-0}" = 1 ]; then say "skipped (HARNESS_SKIP_DOCKER=1)"; exit 0; fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null && SUDO="sudo" || SUDO="__none__"
fi
# Installing packages and starting the daemon need root; a user already served by a running
# daemon (the docker group) needs neither.
as_root() {
  [ "$SUDO" = "__none__" ] && die "need root (or sudo) to: $*"
  $SUDO "$@"
}

# The docker client may exist without an engine (e.g. /usr/local/bin/docker), so check both.
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ] && ! docker info >/dev/null 2>&1; then
  pkgs="$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
  say "installing $pkgs"
  # An empty package index (fresh container images ship none) makes apt-get install fail.
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
    as_root apt-get update -qq
  fi
  # shellcheck disable=SC2086
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
elif ! command -v debootstrap >/dev/null; then
  say "debootstrap missing: the offline image build needs it (apt-get install debootstrap)"
fi

answers() { docker info >/dev/null 2>&1; }

DOCKERD_PID=""
# Starts dockerd with the given flags and waits up to 60 s for the API; fails if it dies.
start_dockerd() {
  say "starting dockerd $* (log: $LOG)"
  # setsid + nohup: the daemon must outlive this script and the shell that ran it.
  # setsid execs in place (a background job is no group leader), so $! is dockerd itself.
  DOCKERD_PID="$(as_root sh -c "setsid nohup dockerd $* >>$LOG 2>&1 </dev/null & echo \$!")"
  for _ in $(seq 1 60); do
    answers && return 0
    if ! as_root kill -0 "$DOCKERD_PID" 2>/dev/null; then
      say "dockerd exited; last log lines:"; tail -n 5 "$LOG" >&2 || true
      DOCKERD_PID=""
      return 1
    fi
    sleep 1
  done
  say "dockerd did not answer within 60 s"
  return 1
}

# Stops only the dockerd this script started (never other daemons on the machine).
stop_ours() {
  [ -n "$DOCKERD_PID" ] || return 0
  as_root kill "$DOCKERD_PID" 2>/dev/null || true
  for _ in $(seq 1 20); do as_root kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
  DOCKERD_PID=""
}

if answers; then
  say "Docker Engine is running ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
elif [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
  say "starting docker with systemd"
  as_root systemctl start docker
  for _ in $(seq 1 60); do answers && break; sleep 1; done
  answers || die "docker did not start (journalctl -u docker)"
else
  pgrep -x dockerd >/dev/null && { say "a dockerd is running but not answering; waiting"; for _ in $(seq 1 30); do answers && break; sleep 1; done; }
  # Defaults first (overlay2, iptables); the fallback needs neither kernel overlay support
  # nor iptables, which some VMs and nested containers lack. The sandbox uses no network.
  answers || start_dockerd ${DOCKERD_FLAGS:-} \
    || { stop_ours; start_dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs; } \
    || die "could not start dockerd; see $LOG"
  say "Docker Engine is running ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
fi

IMAGE="${HARNESS_SANDBOX_IMAGE:-harness-sandbox:latest}"
if bash sandbox/build-rootfs.sh --up-to-date; then
  say "sandbox image $IMAGE present"
elif [ "$(id -u)" = 0 ]; then
  bash sandbox/build-rootfs.sh
else
  # debootstrap and chroot need root.
  as_root env "HARNESS_SANDBOX_IMAGE=$IMAGE" bash sandbox/build-rootfs.sh
fi

# Test only: the sandbox image plus strace, which the policy's differential test traces
# commands in (quick when the image is up to date with the sandbox image).
bash sandbox/build-trace-image.sh
