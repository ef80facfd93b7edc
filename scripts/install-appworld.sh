#!/usr/bin/env bash
# Create ./.venv-appworld: AppWorld 0.1.3.post1 (the version the paper pins) in its own interpreter,
# since it pins pydantic 1 and verimut's AgentDojo needs pydantic 2. verimut drives it across a process
# boundary (src/verimut/adapters/worker.py). `appworld install` unpacks the apps shipped in the wheel (offline).
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-appworld/bin/python ]; then
  "$PY" -m venv .venv-appworld
fi
stamp=.venv-appworld/.verimut-installed
want=$(cat constraints-appworld.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv-appworld/bin/python -m pip install --quiet --disable-pip-version-check -c constraints-appworld.txt appworld==0.1.3.post1
  .venv-appworld/bin/appworld install
  echo "$want" > "$stamp"
fi
