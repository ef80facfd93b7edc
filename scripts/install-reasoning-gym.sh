#!/usr/bin/env bash
# Add reasoning-gym (its 106 procedural datasets, each with its own score_answer) to ./.venv, pinned by
# constraints.txt: the extra `reasoning-gym` of pyproject.toml. Its pins resolve with verimut's own.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
stamp=.venv/.verimut-reasoning-gym-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[reasoning-gym]"
  echo "$want" > "$stamp"
fi
