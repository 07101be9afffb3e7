#!/usr/bin/env bash
# Every test of envgen, after doing the set-up itself: Debian and npm packages, the build,
# a Docker engine and image for the docker sandbox's contract suite, then typecheck, lint
# and the vitest suites (unit and slow). Usage: bash scripts/test.sh [vitest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# The docker sandbox is tested for real: start an engine (and build the image) when this
# machine can. In CI an engine that cannot start fails the docker suite loudly.
if ! bash scripts/start-docker.sh; then
  echo "test: no Docker engine could be started; the docker sandbox suite will say so" >&2
fi

npx turbo run typecheck lint --output-logs=errors-only
npx vitest run "$@"
