#!/usr/bin/env bash
# Install (if needed), then audit a benchmark: bash scripts/audit.sh agentdojo [options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/verimut audit "$@"
