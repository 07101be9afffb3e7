#!/usr/bin/env bash
# The main job end to end on a real Python project, with embedded defaults (no Redis,
# no Docker, no LLM): set-up, then the whole loop on Debian's toolz —
#   inject   acquire, baseline with coverage, candidates from every strategy, fast
#            validation, bundles checked, pool; then each new instance's task (gold
#            labels, a problem statement from its failing tests, a leak-free checkout ref)
#   export   SWE-smith JSONL, CodeScout rows and HF Parquet under .cache/demo/dataset
#   run      the BM25 baseline solver on every task, scored, outcomes recorded
#   stats    the pool's spread: too hard, frontier, too easy per repo and strategy
# Usage: bash scripts/demo.sh [REPO] [COUNT]   (default debian:toolz 100)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
repo="${1:-debian:toolz}"
out=.cache/demo/dataset
npx envgen inject --repo "$repo" -n "${2:-100}" --seed 7
npx envgen export --format swesmith,codescout,hf --out "$out"
npx envgen run --solver baseline
npx envgen pool stats
