#!/usr/bin/env bash
# Install (if needed), then run the test suite. Slow, exhaustive tests are skipped: scripts/test-slow.sh runs them.
# AppWorld's own environment (.venv-appworld) is installed too: tests/test_appworld.py audits it for real;
# and Debian's chromium: tests/test_report.py loads report.html in it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/install-appworld.sh
bash scripts/install-chromium.sh  # the HTML report's tests open it in headless Chromium
bash scripts/install-bfcl.sh      # BFCL multi-turn and tau2-bench are audited for real too (tests/test_bfcl.py, test_tau2.py)
bash scripts/install-tau2.sh
exec .venv/bin/python -m pytest "$@"
