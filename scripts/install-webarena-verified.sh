#!/usr/bin/env bash
# Create ./.venv-webarena: WebArena-Verified 1.2.3 in its own interpreter, since it pins pydantic 2.12.0 and
# verimut pins a newer one. verimut drives it across a process boundary (src/verimut/adapters/worker.py).
# The package ships its 812 tasks and evaluates offline: nothing else is downloaded.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-webarena/bin/python ]; then
  "$PY" -m venv .venv-webarena
fi
stamp=.venv-webarena/.verimut-installed
want=$(cat constraints-webarena.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv-webarena/bin/python -m pip install --quiet --disable-pip-version-check -c constraints-webarena.txt webarena-verified==1.2.3
  echo "$want" > "$stamp"
fi
