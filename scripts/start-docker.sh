#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine and that envgen's Python image
# exists. Idempotent: does nothing that is already done.
#
#   scripts/start-docker.sh
#
# Starts dockerd in the background (vfs storage, no iptables, no bridge: sandboxes run
# with NetworkMode none) logging to $ENVGEN_DOCKERD_LOG (default /var/log/envgen-dockerd.log),
# then builds envgen/python:bookworm with docker/build-base-image.sh when missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
image="${ENVGEN_IMAGE:-envgen/python:bookworm}"
log="${ENVGEN_DOCKERD_LOG:-/var/log/envgen-dockerd.log}"

install_debs() {
  echo "installing $*" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" \
    || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
}

if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
  install_debs docker.io
fi

if ! docker info >/dev/null 2>&1; then
  echo "starting dockerd (log: $log)" >&2
  nohup dockerd --storage-driver vfs --iptables=false --bridge=none >>"$log" 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "dockerd did not answer within 60 s; see $log" >&2; exit 1; }
fi
echo "docker engine answers" >&2

if ! docker image inspect "$image" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || install_debs debootstrap
  echo "building $image (debootstrap, a few minutes)" >&2
  ENVGEN_IMAGE="$image" "$here/../docker/build-base-image.sh"
fi
echo "image $image present" >&2
