#!/usr/bin/env bash
# Install verimut and everything it needs into ./.venv (Python 3.11+), pinned by constraints.txt.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.verimut-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test,dev]"
  echo "$want" > "$stamp"
fi
