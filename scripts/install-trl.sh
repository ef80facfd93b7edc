#!/usr/bin/env bash
# TRL's own reward functions (trl.rewards, graded with math-verify) in their own environment, ./.venv-trl: TRL pulls
# in torch and transformers, which the default install (./.venv) must not carry. The extra `trl` of pyproject.toml,
# pinned by constraints.txt. Not part of scripts/test.sh; run its tests with
#   .venv-trl/bin/python -m pytest tests/benchmarks/trl
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv-trl/.verimut-trl-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  [ -x .venv-trl/bin/python ] || python3 -m venv .venv-trl
  .venv-trl/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[trl,test]"
  echo "$want" > "$stamp"
fi
