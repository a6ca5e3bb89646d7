#!/bin/sh
# Entry point of the worker image (Dockerfile; docs/deployment.md). Runs the command it is given
# (default `node bin/harness.js worker`) after three things a containerised worker needs:
#
# 1. Its host id and home. HARNESS_HOST_ID defaults to the container's hostname (each replica
#    its own); HARNESS_HOME, unless set, is $HARNESS_DATA/hosts/$HARNESS_HOST_ID, so workers
#    sharing one data folder never share pid files, exec records or MCP server notes.
# 2. Host-visible skills. The worker bind-mounts each skill folder into the session's sandbox
#    by its real path, and the Docker Engine resolves that path on the HOST, where the image's
#    /app does not exist. The shipped skills are copied once under HARNESS_HOME (which the
#    deployment mounts at the same path on the host and in the worker) and /app/skills points
#    there through a link, so the path the worker asks for exists on the host too.
# 3. A non-root worker. Started as root (the default), it makes HARNESS_HOME its user's, then
#    drops to HARNESS_UID:HARNESS_GID (1000:1000) with the Docker socket's group as its only
#    supplementary group (read from the socket itself: no group id to configure) and no
#    capabilities. Started as a non-root user (`--user`, runAsUser), it checks what it can and
#    says what is missing.
# 4. The home adopted. The harness uses only a HARNESS_HOME it marked for this user on this
#    machine (machine/home-mark.ts), with a key kept under the container's HOME, which a new
#    container does not have; the data folder is the operator's, so the worker's user adopts its
#    home at every start (`harness home --adopt`), shipped skills and earlier state included.
set -eu

say() { printf 'worker-entrypoint: %s\n' "$*" >&2; }

uid="${HARNESS_UID:-1000}"
gid="${HARNESS_GID:-1000}"
HARNESS_HOST_ID="${HARNESS_HOST_ID:-$(cat /etc/hostname 2>/dev/null || echo worker)}"
export HARNESS_HOST_ID
if [ -z "${HARNESS_HOME:-}" ]; then
  HARNESS_HOME="${HARNESS_DATA:-/var/lib/harness}/hosts/${HARNESS_HOST_ID}"
fi
export HARNESS_HOME

socket="${DOCKER_HOST:-unix:///var/run/docker.sock}"
case "$socket" in unix://*) socket="${socket#unix://}" ;; *) socket="" ;; esac

shipped=/app/skills.image
link=/var/lib/harness-worker/skills

# Copies the shipped skills under HARNESS_HOME (once per content: the folder is named by a hash
# of the skills, so a sandbox that has the old folder mounted keeps it intact) and links them.
link_skills() {
  [ -d "$shipped" ] || return 0
  id="$(cat "$shipped/.id" 2>/dev/null || echo current)"
  dest="$HARNESS_HOME/shipped-skills/$id"
  if [ ! -d "$dest" ]; then
    tmp="$dest.tmp.$$"
    mkdir -p "$HARNESS_HOME/shipped-skills" && rm -rf "$tmp" && cp -R "$shipped" "$tmp" && mv "$tmp" "$dest" || return 1
  fi
  ln -sfn "$dest" "$link"
}
no_skills="warning: could not copy the shipped skills under $HARNESS_HOME and link them from /app/skills (sessions get no shipped skills)"
no_adopt="warning: could not adopt $HARNESS_HOME as the worker's home (the worker will say why)"

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$HARNESS_HOME"
  chown "$uid:$gid" "$HARNESS_HOME" || say "warning: cannot give $HARNESS_HOME to $uid:$gid"
  link_skills || say "$no_skills"
  chown -R "$uid:$gid" "$HARNESS_HOME/shipped-skills" 2>/dev/null || true
  chown -h "$uid:$gid" "$link" 2>/dev/null || true
  setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --no-new-privs -- node /app/bin/harness.js home --adopt "$HARNESS_HOME" >/dev/null || say "$no_adopt"
  if [ -n "$socket" ] && [ -S "$socket" ]; then
    groups="--groups=$(stat -c %g "$socket")"
  else
    groups="--clear-groups"
    [ -n "$socket" ] && say "note: no Docker socket at $socket: run_shell will say SANDBOX_UNAVAILABLE"
  fi
  exec setpriv --reuid="$uid" --regid="$gid" "$groups" --inh-caps=-all --no-new-privs -- "$@"
fi

if ! mkdir -p "$HARNESS_HOME" 2>/dev/null || [ ! -w "$HARNESS_HOME" ]; then
  say "error: HARNESS_HOME $HARNESS_HOME is not writable by uid $(id -u)"
  say "hint: on the host: sudo install -d -o $(id -u) -g $(id -g) $HARNESS_HOME (or start the container as root, which does it)"
  exit 1
fi
link_skills || say "$no_skills"
node /app/bin/harness.js home --adopt "$HARNESS_HOME" >/dev/null || say "$no_adopt"
if [ -n "$socket" ] && [ -S "$socket" ] && [ ! -w "$socket" ]; then
  say "warning: uid $(id -u) cannot use the Docker socket $socket (group $(stat -c %g "$socket")): add that group (group_add / supplementalGroups)"
fi
exec "$@"
