#!/usr/bin/env bash
# Install (if needed), then run only the slow, exhaustive tests (the whole AgentDojo audit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/install-bfcl.sh
bash scripts/install-tau2.sh
exec .venv/bin/python -m pytest -m slow "$@"
