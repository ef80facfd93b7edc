#!/usr/bin/env bash
# Create ./.venv-cube: CUBE (PyPI cube-standard 0.1.0rc10) with the MiniWoB++ cube (miniwob-cube 1.1.0, which
# brings miniwob 1.1.0, cube-browser-tool, browsergym-core and playwright 1.44.0), pinned by constraints-cube.txt.
# CUBE needs Python >= 3.12 and verimut runs on 3.11, so like AppWorld it lives in its own interpreter and verimut
# drives it across a process boundary (src/verimut/adapters/worker.py). The browser is Debian's Chromium
# (scripts/install-chromium.sh): Playwright's own browser download cannot run on these machines, so the cube's
# browser config points Playwright at /usr/bin/chromium (executable_path).
# Safe to run again: it only installs what is missing. PYTHON names the 3.12 interpreter to use.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-chromium.sh
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$HOME/.pyenv/versions/3.12.1/bin/python3.12" ]; then
    PYTHON="$HOME/.pyenv/versions/3.12.1/bin/python3.12"
  elif command -v python3.12 >/dev/null; then
    PYTHON=python3.12
  else
    echo "verimut: error: CUBE needs Python >= 3.12 and none was found: set PYTHON to a 3.12 interpreter" >&2
    exit 2
  fi
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
  echo "verimut: error: $PYTHON is not Python >= 3.12, which CUBE needs" >&2
  exit 2
fi
# A venv left by another interpreter (older than 3.12) is made again.
if [ -x .venv-cube/bin/python ] && ! .venv-cube/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
  rm -rf .venv-cube
fi
if [ ! -x .venv-cube/bin/python ]; then
  "$PYTHON" -m venv .venv-cube
fi
stamp=.venv-cube/.verimut-installed
want=$(cat constraints-cube.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv-cube/bin/python -m pip install --quiet --disable-pip-version-check -c constraints-cube.txt \
    cube-standard==0.1.0rc10 miniwob-cube==1.1.0 miniwob==1.1.0
  .venv-cube/bin/python -c 'import cube, miniwob, miniwob_cube, cube_browser_tool.bgym_tool, playwright.sync_api'
  echo "$want" > "$stamp"
fi
