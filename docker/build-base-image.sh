#!/usr/bin/env bash
# Builds envgen/python:bookworm (the tag docker/python/Dockerfile builds) without any
# container registry: debootstrap a minimal Debian bookworm from the Debian mirror apt
# already uses, then `docker import` it.
#
#   docker/build-base-image.sh [extra-debian-package ...]
#
# Environment: ENVGEN_IMAGE (tag, default envgen/python:bookworm), DEBIAN_MIRROR
# (default: the first Debian mirror in /etc/apt), ENVGEN_ROOTFS_DIR (scratch parent dir).
# Needs root, debootstrap and a running Docker engine.
set -euo pipefail

image="${ENVGEN_IMAGE:-envgen/python:bookworm}"

find_mirror() {
  # deb822 (`URIs: ...`) and one-line (`deb URI suite ...`) sources; skip the security archive.
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | sed -nE 's/^URIs:[[:space:]]+([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+bookworm([[:space:]].*)?$/\2/p' \
    | grep -E '/debian/?$' | head -n1 || true
}
mirror="${DEBIAN_MIRROR:-$(find_mirror)}"
mirror="${mirror:-http://deb.debian.org/debian}"

command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install -y debootstrap" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "no Docker engine answers: run scripts/start-docker.sh" >&2; exit 1; }

packages="python3,python3-pytest,ripgrep"
for extra in "$@"; do packages="$packages,$extra"; done

rootfs="$(mktemp -d "${ENVGEN_ROOTFS_DIR:-/var/tmp}/envgen-rootfs.XXXXXX")"
cleanup() {
  # debootstrap mounts /proc and /sys inside the target; never delete through a mount.
  local target
  for target in $(findmnt -rn -o TARGET | grep -F "$rootfs" | sort -r || true); do umount -l "$target" || true; done
  rm -rf --one-file-system "$rootfs"
}
trap cleanup EXIT

echo "debootstrap bookworm from $mirror with $packages into $rootfs" >&2
debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" "$mirror"

# Same slimming as the Dockerfile: no package lists or downloaded archives in the image.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log

tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV HOME=/tmp' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'WORKDIR /tmp' \
  --change 'CMD ["/bin/bash"]' \
  - "$image"
echo "built $image" >&2
