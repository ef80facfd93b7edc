#!/usr/bin/env bash
# Install what `verimut audit workarena` needs into ./.venv: Debian's Chromium (scripts/install-chromium.sh;
# Playwright's own browser download cannot run on these machines) and the `workarena` extra
# (browsergym-workarena 0.5.3, playwright 1.44.0), pinned by constraints.txt. They install beside
# AgentDojo without conflicts, so WorkArena runs in verimut's own interpreter.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/install-chromium.sh
stamp=.venv/.verimut-workarena-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test,workarena]"
  echo "$want" > "$stamp"
fi
