#!/bin/bash
# Entrypoint of envgen/envgen:local.
#
#   envgen-entrypoint worker [envgen worker options]   an envgen worker (see below)
#   envgen-entrypoint ARGS...                          envgen ARGS (grow, serve, repos, ...)
#
# A worker runs untrusted code through the docker sandbox: dockerode asks the engine on the
# mounted /var/run/docker.sock to bind-mount *host* paths into each sandbox — the worktrees
# under its home, scratch directories under TMPDIR, and the pytest plugin directories that
# ship inside envgen (packages/testrun/python, packages/validate/python). So everything a
# worker hands to the engine must sit at the same path inside this container and on the
# engine's host. ENVGEN_WORKERS_DIR is such a directory (compose.yaml mounts it at its own
# path); this script
#   1. copies envgen from the image into $ENVGEN_WORKERS_DIR/app/<build id> once per image
#      (under a lock) and runs it from there, so the plugin directories are host paths;
#   2. claims the first free slot N (a flock held by the worker process for its lifetime)
#      and uses $ENVGEN_WORKERS_DIR/worker-N as its home and worker-N/tmp as TMPDIR. Each
#      running worker gets its own home (`docker-compose up --scale worker=K` works), and a
#      restarted worker takes a free slot again, keeping that home's mirrors and baselines.
set -euo pipefail

image_app=/opt/envgen

if [ "${1:-}" != worker ]; then
  exec node "$image_app/apps/cli/bin/envgen.js" "$@"
fi

root="${ENVGEN_WORKERS_DIR:?set ENVGEN_WORKERS_DIR to a directory mounted at the same path as on the Docker host}"
mkdir -p "$root/app"

build_id="$(cat "$image_app/.build-id")"
app="$root/app/$build_id"
exec 8>"$root/app.lock"
flock 8
if [ ! -e "$app/.complete" ]; then
  echo "envgen-entrypoint: copying envgen $build_id to $app" >&2
  rm -rf "$app" "$app.partial"
  cp -a "$image_app" "$app.partial"
  touch "$app.partial/.complete"
  mv "$app.partial" "$app"
fi
exec 8>&-

slot=1
while :; do
  exec 9>"$root/worker-$slot.lock"
  flock -n 9 && break
  exec 9>&-
  slot=$((slot + 1))
done
home="$root/worker-$slot"
# The slot is ours: whatever a killed predecessor left in its scratch directory is garbage.
rm -rf "$home/tmp"
mkdir -p "$home/tmp"
export ENVGEN_HOME="$home" TMPDIR="$home/tmp"
echo "envgen-entrypoint: worker slot $slot, home $home" >&2

# fd 9 (the slot's lock) stays open in the worker process until it exits.
exec node "$app/apps/cli/bin/envgen.js" "$@"
