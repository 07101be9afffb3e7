#!/usr/bin/env bash
# Builds envgen/envgen:local (docker/envgen/Dockerfile), the image every service of
# docker/compose.yaml runs, without any container registry: FROM envgen/python:bookworm
# (docker/build-base-image.sh), with this machine's Node binary and this checkout's build.
#
#   npx turbo run build && docker/build-envgen-image.sh
#
# Environment: ENVGEN_APP_IMAGE (tag, default envgen/envgen:local), ENVGEN_BASE_IMAGE
# (default envgen/python:bookworm), ENVGEN_IMAGE_CONTEXT_DIR (scratch parent dir, default
# /var/tmp). Needs a running Docker engine (scripts/start-docker.sh), npm and node >= 20.
#
# The context is staged outside the repo and kept lean (vfs copies whole layers): the
# package.json files, each package's dist/ and runtime files (bin/, python/, editor/,
# shell/, configs/profiles), and node_modules copied from this checkout then pruned of dev
# dependencies offline (native modules stay as built here, for the same Debian and Node).
# No .git, no sources, no tests, no caches.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
image="${ENVGEN_APP_IMAGE:-envgen/envgen:local}"
base="${ENVGEN_BASE_IMAGE:-envgen/python:bookworm}"

docker info >/dev/null 2>&1 || { echo "no Docker engine answers: run scripts/start-docker.sh" >&2; exit 1; }
docker image inspect "$base" >/dev/null 2>&1 || { echo "$base is missing: run scripts/start-docker.sh (or docker/build-base-image.sh)" >&2; exit 1; }
[ -f "$repo/apps/cli/dist/main.js" ] || { echo "envgen is not built: run npx turbo run build" >&2; exit 1; }
[ -d "$repo/node_modules" ] || { echo "node_modules is missing: run npm ci" >&2; exit 1; }
node="$(readlink -f "$(command -v node)")"
major="$("$node" -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 20 ] || { echo "node $node is v$major; envgen needs >= 20" >&2; exit 1; }

context="$(mktemp -d "${ENVGEN_IMAGE_CONTEXT_DIR:-/var/tmp}/envgen-image.XXXXXX")"
trap 'rm -rf "$context"' EXIT
rootfs="$context/rootfs"
app="$rootfs/opt/envgen"
mkdir -p "$app" "$rootfs/usr/local/bin"

echo "staging $repo in $context" >&2
cd "$repo"
paths=(package.json package-lock.json configs/profiles)
for dir in packages/* apps/*; do
  paths+=("$dir/package.json" "$dir/dist")
  for extra in bin python editor shell; do [ -e "$dir/$extra" ] && paths+=("$dir/$extra"); done
done
tar -c --exclude='*.test.*' --exclude='*.tsbuildinfo' --exclude='__pycache__' "${paths[@]}" | tar -C "$app" -x
cp -a node_modules "$app/"
(cd "$app" && npm prune --omit=dev --offline --ignore-scripts --no-audit --no-fund --loglevel=error)
# Build leftovers of the native modules: only the .node files are loaded.
find "$app/node_modules" -path '*/build/Release/obj.target' -prune -exec rm -rf {} +
rm -rf "$app/node_modules/better-sqlite3/deps" "$app/node_modules/.cache"

build_id="$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo nogit)-$(date -u +%Y%m%d%H%M%S)"
echo "$build_id" >"$app/.build-id"
cp "$node" "$rootfs/usr/local/bin/node"
install -m 0755 "$here/envgen/entrypoint.sh" "$rootfs/usr/local/bin/envgen-entrypoint"
ln -s /opt/envgen/apps/cli/bin/envgen.js "$rootfs/usr/local/bin/envgen"
cp "$here/envgen/Dockerfile" "$context/Dockerfile"
echo "context: $(du -sh "$context" | cut -f1) (build $build_id)" >&2

# The classic builder: it needs no buildx plugin, and --network host lets apt reach the
# Debian mirror on an engine started with --bridge=none.
DOCKER_BUILDKIT=0 docker build --network host --build-arg "BASE=$base" -t "$image" "$context"
echo "built $image ($build_id)" >&2
