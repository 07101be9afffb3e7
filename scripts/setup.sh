#!/usr/bin/env bash
# Installs what envgen needs on a fresh Debian machine, then builds it. Idempotent and
# quick when everything is already there. Usage: bash scripts/setup.sh [--with-docker]
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: the sandbox, Debian's Python with pytest, and the test dependencies
# of the corpus projects the test suite uses; ripgrep for the agent's terminal; chromium
# for the pool report's browser test; redis-server for the queue tests' private Redis (restarted mid-round);
# gcc and python3-dev for the fixture project whose tests need its C extension built, cython3
# for the one whose C source Cython generates; python3-pbr for the pbr package's plain run
# (`pip install -e .` builds it with pbr);
# python3-hypothesis and python3-pytest-timeout for fixtures of property-based suites and
# of suites that time their tests, python3-pytest-benchmark for the one whose CI skips its
# benchmarks; python3-django and python3-pytest-django for the fixture
# Django app whose tests Django's own runner runs; python3-pytest-rerunfailures and
# python3-pytest-xdist, which many developers' machines have, loaded in every pytest session.
apt_packages=(git xz-utils bubblewrap ripgrep python3 python3-pytest python3-pip python3-setuptools python3-setuptools-scm dh-python python3-yaml python3-pathspec python3-json-pointer python3-pytest-asyncio python3-hypothesis python3-pytest-timeout python3-pytest-benchmark python3-django python3-pytest-django python3-pytest-rerunfailures python3-pytest-xdist chromium redis-server gcc python3-dev cython3 python3-pbr)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: not root; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm packages; native addons (tree-sitter) build against the system's Node headers.
export npm_config_nodedir=/usr
if [ ! -d node_modules/tree-sitter/build ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi

echo "setup: building"
npx turbo run build --output-logs=errors-only

if [ "${1:-}" = "--with-docker" ]; then
  bash scripts/start-docker.sh
fi
