#!/usr/bin/env bash
# Install (if needed), then test. Slow, exhaustive tests are skipped: scripts/test-slow.sh runs them.
#
#   bash scripts/test.sh [ARGS...]            every benchmark installed, ruff check, ruff format --check, mypy src,
#                                             then every tier, so that nothing skips (what .ci/run runs)
#   bash scripts/test.sh unit [ARGS...]       tests/unit only: pure, under a minute; needs scripts/install.sh alone
#   bash scripts/test.sh cli [ARGS...]        tests/cli: the real command line (and report.html in Chromium)
#   bash scripts/test.sh executors [ARGS...]  tests/executors: pool, Ray, the remote worker
#   bash scripts/test.sh benchmarks [ARGS...] tests/benchmarks: each benchmark for real, every install first
#
# ARGS go to pytest as they are (-k, -x, a test's path, --durations=20 ...; -n 0 runs in one process).
# docs/development.md has the tiers' times.
set -euo pipefail
cd "$(dirname "$0")/.."
# Two workers, each module on one (tests/conftest.py says why): most tests wait on subprocesses, timeouts or a
# browser, so a second worker fills the idle core.
pytest=(.venv/bin/python -m pytest -n 2 --dist loadfile)

tier=all
case "${1:-}" in
  unit | cli | executors | benchmarks) tier=$1; shift ;;
esac

bash scripts/install.sh
case $tier in
  unit | executors) exec "${pytest[@]}" "tests/$tier" "$@" ;;
  cli)
    bash scripts/install-chromium.sh  # report.html is loaded in Debian's headless Chromium
    exec "${pytest[@]}" tests/cli "$@" ;;
esac

# AppWorld lives in its own environment, so it installs beside the others (it mostly waits on the network).
appworld_log=$(mktemp)
bash scripts/install-appworld.sh >"$appworld_log" 2>&1 &
appworld=$!
bash scripts/install-workarena.sh  # installs Debian's chromium too (scripts/install-chromium.sh)
bash scripts/install-bfcl.sh
bash scripts/install-tau2.sh
bash scripts/install-cube.sh  # CUBE (MiniWoB++) in its own Python 3.12 environment, .venv-cube
bash scripts/install-webarena-verified.sh  # WebArena-Verified in its own environment, .venv-webarena (pydantic 2.12)
bash scripts/install-reasoning-gym.sh  # reasoning-gym's datasets, in .venv (the extra `reasoning-gym`)
if [ "$tier" = all ]; then
  .venv/bin/ruff check src tests
  .venv/bin/ruff format --check src tests
  .venv/bin/mypy src
fi
if ! wait "$appworld"; then
  cat "$appworld_log" >&2
  echo "verimut: error: scripts/install-appworld.sh failed" >&2
  exit 1
fi
cat "$appworld_log"
rm -f "$appworld_log"
if [ "$tier" = benchmarks ]; then
  exec "${pytest[@]}" tests/benchmarks "$@"
fi
exec "${pytest[@]}" "$@"
