#!/usr/bin/env bash
# Install (if needed), then audit a benchmark: bash scripts/audit.sh agentdojo [options]
# (bfcl, tau2 and appworld install their own extras first).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
case "${1:-}" in
  bfcl) bash scripts/install-bfcl.sh ;;
  tau2) bash scripts/install-tau2.sh ;;
  appworld) bash scripts/install-appworld.sh ;;
esac
exec .venv/bin/verimut audit "$@"
