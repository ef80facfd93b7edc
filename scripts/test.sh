#!/usr/bin/env bash
# Install (if needed), then run the test suite. Slow, exhaustive tests are skipped: scripts/test-slow.sh runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/python -m pytest "$@"
