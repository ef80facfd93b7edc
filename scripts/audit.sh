#!/usr/bin/env bash
# Install (if needed), then audit a benchmark: bash scripts/audit.sh agentdojo [options]
# A benchmark that runs in its own environment, or needs an extra, gets that installed too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
case "${1:-}" in
  appworld) bash scripts/install-appworld.sh ;;
  bfcl) bash scripts/install-bfcl.sh ;;
  miniwob) bash scripts/install-cube.sh ;;
  reasoning-gym) bash scripts/install-reasoning-gym.sh ;;
  tau2) bash scripts/install-tau2.sh ;;
  webarena-verified) bash scripts/install-webarena-verified.sh ;;
  workarena) bash scripts/install-workarena.sh ;;
esac
exec .venv/bin/verimut audit "$@"
