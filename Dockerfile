# The harness worker image: `node bin/harness.js worker` against TEMPORAL_ADDRESS
# (docker-compose.yml builds it; docs/deployment.md says how to run it).
#
#   docker build -t harness-worker .
#   docker build --build-arg BASE=my-node-image -t harness-worker .
#
# BASE: a Debian-like image with Node >= 20.19 and npm on PATH, useradd and setpriv (util-linux).
# No BuildKit-only syntax, so the classic builder (DOCKER_BUILDKIT=0, Compose 1.29) builds it too.
# npm ci reaches the npm registry; nothing else is downloaded.
ARG BASE=node:20-bookworm-slim

# ---- build: every dependency, compile (TypeScript + the workflow bundle), then drop the dev ones
# and the Temporal core bridge's binaries for other platforms (about 110 MB of 150)
FROM ${BASE} AS build
WORKDIR /app
# The lockfile alone first: this layer (the slow one) is reused until the dependencies change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY . .
# The shipped skills move aside: at run time /app/skills links to a copy under HARNESS_HOME, a
# path the Docker Engine also finds on the host (deploy/worker-entrypoint.sh says why). .id names
# that copy by the skills' content.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund --loglevel=error \
 && keep="node_modules/@temporalio/core-bridge/releases/$(uname -m)-unknown-linux-gnu" \
 && if [ -d "$keep" ]; then find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 ! -path "$keep" -exec rm -rf {} +; fi \
 && mv skills skills.image \
 && (cd skills.image && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16 > .id) \
 && ln -s /var/lib/harness-worker/skills skills \
 && chmod 755 deploy/worker-entrypoint.sh

# ---- the worker: the built tree and its production dependencies only
FROM ${BASE}
# The user the worker runs as. The entrypoint starts as root, makes the worker's HARNESS_HOME
# this user's, and drops to it with the Docker socket's group (read from the socket) as its only
# supplementary group. Sandboxes then run as this uid too, so the workspace files are theirs.
ARG HARNESS_UID=1000
ARG HARNESS_GID=1000
RUN (getent group "${HARNESS_GID}" >/dev/null || groupadd --gid "${HARNESS_GID}" harness) \
 && (getent passwd "${HARNESS_UID}" >/dev/null \
     || useradd --uid "${HARNESS_UID}" --gid "${HARNESS_GID}" --home-dir /var/lib/harness-worker --no-create-home --shell /usr/sbin/nologin harness) \
 && install -d -o "${HARNESS_UID}" -g "${HARNESS_GID}" /var/lib/harness /var/lib/harness-worker
COPY --from=build /app /app
WORKDIR /app
# HARNESS_DATA: where workers keep their state; each worker's HARNESS_HOME is
# $HARNESS_DATA/hosts/<HARNESS_HOST_ID> unless HARNESS_HOME is set. A deployment mounts a host
# folder at this same path (docker-compose.yml), so the workspace paths the worker hands the
# Docker Engine exist on the host. No key or secret is set here: they come from the environment.
ENV HARNESS_DATA=/var/lib/harness \
    HARNESS_UID=${HARNESS_UID} \
    HARNESS_GID=${HARNESS_GID} \
    HOME=/var/lib/harness-worker
ENTRYPOINT ["/app/deploy/worker-entrypoint.sh"]
CMD ["node", "bin/harness.js", "worker"]
