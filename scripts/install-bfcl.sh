#!/usr/bin/env bash
# Add BFCL multi-turn to ./.venv: bfcl-eval without its model dependencies, plus mpmath (requirements-bfcl.txt).
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
stamp=.venv/.verimut-bfcl-installed
want=$(cat requirements-bfcl.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-bfcl.txt
  echo "$want" > "$stamp"
fi
