#!/usr/bin/env bash
# The main job end to end on a real Python project, with embedded defaults (no Redis,
# no Docker, no LLM): set-up, then `envgen env` on Debian's toolz.
# Usage: bash scripts/demo.sh [REPO]   (default debian:toolz)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npx envgen env --repo "${1:-debian:toolz}"
