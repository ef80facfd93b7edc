#!/usr/bin/env bash
# Install (if needed), then run the test suite. Slow, exhaustive tests are skipped: scripts/test-slow.sh runs them.
# AppWorld's own environment (.venv-appworld) is installed too: tests/test_appworld.py audits it for real;
# so are WorkArena and Debian's Chromium: tests/test_workarena.py runs its validator in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/install-appworld.sh
bash scripts/install-workarena.sh
exec .venv/bin/python -m pytest "$@"
