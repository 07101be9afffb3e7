#!/usr/bin/env bash
# The main job end to end on a real Python project, with embedded defaults (no Redis,
# no Docker, no LLM): set-up, then `envgen inject` on Debian's toolz (acquire, baseline
# with coverage, candidates from every strategy, fast validation, bundles checked, pool),
# then what the pool holds.
# Usage: bash scripts/demo.sh [REPO] [COUNT]   (default debian:toolz 100)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
repo="${1:-debian:toolz}"
npx envgen inject --repo "$repo" -n "${2:-100}" --seed 7
npx envgen pool list --limit 10
