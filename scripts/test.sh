#!/usr/bin/env bash
# Install (if needed), then run the test suite. Slow, exhaustive tests are skipped: scripts/test-slow.sh runs them.
# AppWorld's own environment (.venv-appworld) is installed too: tests/test_appworld.py audits it for real;
# so are WorkArena and Debian's Chromium: tests/test_workarena.py runs its validator in headless Chromium,
# and tests/test_report.py loads report.html in it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/install-appworld.sh
bash scripts/install-workarena.sh  # installs Debian's chromium too (scripts/install-chromium.sh)
bash scripts/install-bfcl.sh       # BFCL multi-turn and tau2-bench are audited for real too (tests/test_bfcl.py, test_tau2.py)
bash scripts/install-tau2.sh
exec .venv/bin/python -m pytest "$@"
